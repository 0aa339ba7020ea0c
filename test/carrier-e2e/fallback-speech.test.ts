/**
 * No caller is left in silence, on a phone call: the carrier simulator's media stream, the STT and TTS
 * vendor fakes and the customer backend fake over real sockets. For each way the backend can fail a turn, the
 * caller hears the fallback in time (the first media frame after the end of the caller's turn), the next turn is
 * answered, and the session details name the cause. One gateway for the whole file; each row is one call.
 */
import t from 'tap'
import { startFakeBackend, type FakeBackend } from '../fakes/backend/fake-backend.js'
import { FakeCallsApi } from '../fakes/carrier/fake-calls-api.js'
import { newCallSid } from '../fakes/carrier/phone-simulator.js'
import { closedPort, DEFAULT_FALLBACK, entryFor, FAILURE_ROWS } from '../helpers/failure-rows.js'
import { callTenant, eventually, newTenant, sessionOfCall, sse, startVoiceWorld, type CarrierTenant } from './carrier-setup.js'

const { c, deepgram } = await startVoiceWorld(t)
const backend = await startFakeBackend({ secret: 'not-checked-here' })
t.teardown(() => backend.close())

/** A tenant whose agent posts to `url`; turns end on the STT's end of turn (no VAD), the fallback settings as defaulted. */
function tenantAt(url: string, extra: Record<string, unknown> = {}, api?: FakeCallsApi): Promise<CarrierTenant> {
  return newTenant(c, {
    template: 'voice-agent-webhook',
    carrier: api === undefined ? { authToken: 'fallback-token' } : { authToken: api.authToken, api },
    config: (config) => ({
      ...config,
      vad: { ...config.vad, enabled: false },
      plugins: config.plugins.map((p: { use: string; options: Record<string, unknown> }) => {
        if (p.use === 'agent.webhook') return { ...p, options: { ...p.options, url, ...extra } }
        if (p.use === 'stt.vendor_a') return { use: 'stt.vendor_a', options: { model_id: 'nova-3', language: 'en' } }
        if (p.use === 'turn_manager') return { ...p, options: { ...p.options, base_timeout_ms: 800 } }
        return p
      }),
    }),
  })
}

const tenant = await tenantAt(backend.url)
const FIRST = 'where is my parcel'
const SECOND = 'and when will it arrive'

for (const row of FAILURE_ROWS) {
  t.test(`${row.name}: the caller hears the fallback, the next turn is answered, the cause is stored`, async (t) => {
    let callee = tenant
    let answering: FakeBackend = backend
    let port = 0
    if (row.reply === undefined) {
      port = await closedPort()
      callee = await tenantAt(`http://127.0.0.1:${port}/agent`)
    } else {
      const failing = row.reply
      backend.reply = (req) => {
        if (req.json.type === 'session.start') return sse(req.json.turn_id, 'Hello.')
        return req.json.text === FIRST ? failing(req) : sse(req.json.turn_id, 'Answered.')
      }
    }
    const callSid = newCallSid()
    const sttBefore = deepgram.connections.length
    const r = await callTenant(c, callee, { callSid, realtime: true, silenceWhenIdle: true, playbackSpeed: 4 })
    if (r.outcome !== 'connected') throw new Error(`call not connected: ${JSON.stringify(r)}`)
    const call = r.call
    t.teardown(() => call.hangup())
    const row0 = await eventually(async () => sessionOfCall(c, callSid))
    const stt = await eventually(async () => (deepgram.connections.length > sttBefore ? deepgram.connections.at(-1) : undefined))
    /** Every audio chunk sent so far was heard (its mark echoed). */
    const allHeard = () => eventually(async () => (call.earpiece.pendingMarks().length === 0 ? true : undefined), 10_000)
    if (row.reply !== undefined) await eventually(async () => (call.marks.length > 0 ? true : undefined), 10_000)
    else await new Promise((resolve) => setTimeout(resolve, 300))
    await allHeard()

    stt.sendSpeechStarted()
    await new Promise((resolve) => setTimeout(resolve, 200))
    const endedAt = performance.now()
    stt.sendResults(FIRST, { isFinal: true, speechFinal: true })
    const media = await eventually(async () => call.messages.find((m) => m.event === 'media' && m.at >= endedAt), 10_000)
    const waited = Math.round(media.at - endedAt)
    t.ok(waited <= row.boundMs, `first audio ${waited} ms after the caller's turn (at most ${row.boundMs})`)
    await new Promise((resolve) => setTimeout(resolve, 200))
    await allHeard()

    if (row.reply === undefined) {
      // The backend comes up where the agent points: the next turn goes to it as usual.
      answering = await startFakeBackend({ secret: 'not-checked-here', port })
      t.teardown(() => answering.close())
      answering.reply = (req) => sse(req.json.turn_id, 'Answered.')
    }
    const before = answering.requests.length
    stt.sendSpeechStarted()
    await new Promise((resolve) => setTimeout(resolve, 200))
    const secondAt = performance.now()
    stt.sendResults(SECOND, { isFinal: true, speechFinal: true })
    const next = await answering.request(before, 10_000)
    t.equal(next.json.text, SECOND, 'the next turn reached the backend')
    await eventually(async () => call.messages.find((m) => m.event === 'media' && m.at >= secondAt), 10_000)

    const details = await eventually(async () => {
      const d = await c.gw.request('GET', `/v1/agents/${callee.agentId}/sessions/${row0.id}`, { key: callee.apiKey })
      return entryFor(d.body, SECOND)?.assistant_message === 'Answered.' ? d.body : undefined
    }, 10_000)
    const failed = entryFor(details, FIRST)
    t.match(failed?.failure, { cause: row.cause, heard: DEFAULT_FALLBACK, detail: String }, 'the cause is in the session details')
    t.equal(failed?.assistant_message, DEFAULT_FALLBACK)
    // On a phone the wait runs to the first audio heard (the carrier's mark), a little after the frame went out.
    t.ok(failed?.failure?.waited_ms >= 0 && failed?.failure?.waited_ms <= row.boundMs + 500, `waited_ms ${failed?.failure?.waited_ms}`)
    t.equal(entryFor(details, SECOND)?.failure, null, 'the next turn is a good one')
    await call.hangup()
  })
}

t.test('after N failures in a row with on_max_failures transfer, the caller hears the transfer message and is transferred', async (t) => {
  const api = await FakeCallsApi.start({ authToken: 'fallback-transfer-token' })
  t.teardown(() => api.close())
  const fallback = {
    max_consecutive_failures: 2,
    on_max_failures: 'transfer',
    transfer_to: '+14155550100',
    transfer_message: 'Let me pass you on.',
  }
  const callee = await tenantAt(backend.url, { fallback }, api)
  backend.reply = (req) => (req.json.type === 'session.start' ? sse(req.json.turn_id, 'Hello.') : { kind: 'status', status: 500 })
  const callSid = newCallSid()
  const sttBefore = deepgram.connections.length
  const r = await callTenant(c, callee, { callSid, realtime: true, silenceWhenIdle: true, playbackSpeed: 4 })
  if (r.outcome !== 'connected') throw new Error(`call not connected: ${JSON.stringify(r)}`)
  api.addInbound(callSid, r.call)
  const stt = await eventually(async () => (deepgram.connections.length > sttBefore ? deepgram.connections.at(-1) : undefined))
  const say = async (text: string) => {
    await eventually(async () => (r.call.marks.length > 0 && r.call.earpiece.pendingMarks().length === 0 ? true : undefined), 10_000)
    stt.sendSpeechStarted()
    await new Promise((resolve) => setTimeout(resolve, 200))
    stt.sendResults(text, { isFinal: true, speechFinal: true })
  }
  await say('hello?')
  // The fallback is heard to its end (its turn is stored) before the caller speaks again.
  const sessionId = (await eventually(async () => sessionOfCall(c, callSid))).id
  await eventually(
    () =>
      c.gw.store.db
        .selectFrom('transcript_entries')
        .select('id')
        .where('session_id', '=', sessionId)
        .where('user_message', '=', 'hello?')
        .executeTakeFirst(),
    10_000,
  )
  await say('is anyone there?')
  const row = await eventually(async () => {
    const s = await sessionOfCall(c, callSid)
    return s?.status === 'ended' ? s : undefined
  }, 15_000)
  t.equal(row.end_reason, 'transferred')
  t.equal(row.transferred_to, '+14155550100')
  t.same(api.updates[0]?.verbs, [{ verb: 'Dial', targets: [{ kind: 'Number', value: '+14155550100' }] }], 'Dial markup')
  const transcript = await c.gw.store.db
    .selectFrom('transcript_entries')
    .select(['user_message', 'assistant_message', 'failure'])
    .where('session_id', '=', row.id)
    .orderBy('seq')
    .execute()
  t.match(
    transcript.map((e) => [e.user_message, e.assistant_message, e.failure?.cause]),
    [
      [null, 'Hello.', undefined],
      ['hello?', DEFAULT_FALLBACK, 'http_500'],
      ['is anyone there?', 'Let me pass you on.', 'http_500'],
    ],
  )
})
