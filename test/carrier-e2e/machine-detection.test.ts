/**
 * Answering machine detection on outbound calls (an addition to the SPEC): `initiate_outbound` with
 * `machine_detection: true` asks the carrier for asynchronous detection; the gateway also listens for the beep.
 * The welcome is never held back; the verdict reaches the backend as a `machine_detection` request it answers like
 * a turn, and is stored on the session.
 */
import { performance } from 'node:perf_hooks'
import t from 'tap'
import { FakeCallsApi } from '../fakes/carrier/fake-calls-api.js'
import { voicemailGreeting } from '../fakes/carrier/voicemail.js'
import type { BackendReply } from '../fakes/backend/fake-backend.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { eventually, newBackendTenant, PUBLIC_URL, sessionOfCall, startCarrierGateway, startVoiceWorld } from './carrier-setup.js'

const CALLEE = '+12025550143'

async function world(t: { teardown(fn: () => unknown): void }, token: string, edit?: (config: any) => void) {
  const { c } = await startVoiceWorld(t)
  const api = await FakeCallsApi.start({ authToken: token, stepMs: 5, rewriteUrl: c.rewrite })
  t.teardown(() => api.close())
  const { tenant, backend } = await newBackendTenant(t, c, token, edit, api)
  const arrivals: { type: string; at: number; body: any }[] = []
  const said = (turnId: string, ...steps: object[]): BackendReply => ({
    kind: 'sse',
    steps: steps.map((s) => ({ data: { ...s, turn_id: turnId } })),
  })
  backend.reply = (req) => {
    arrivals.push({ type: req.json.type, at: performance.now(), body: req.json })
    if (req.json.type === 'session.start')
      return said(req.json.turn_id, { type: 'response.tts', content: 'Hello, this is Acme.' }, { type: 'response.end' })
    if (req.json.type === 'machine_detection' && req.json.answered_by === 'machine_beep') {
      return said(
        req.json.turn_id,
        { type: 'response.tts', content: 'Your order is ready. ' },
        { type: 'response.hangup', content: 'Goodbye.' },
      )
    }
    if (req.json.type === 'data') return { kind: 'json', body: {} }
    return said(req.json.turn_id, { type: 'response.end' })
  }
  const initiate = (body: object) =>
    c.gw.request('POST', `/v1/agents/${tenant.agentId}/calls/initiate_outbound`, {
      key: tenant.apiKey,
      body: { from_phone_number: tenant.number, to_phone_number: CALLEE, ...body },
    })
  return { c, api, backend, arrivals, initiate }
}

t.test('a voicemail with a beep: the gateway hears the beep, the backend leaves its message after it', async (t) => {
  const w = await world(t, 'amd-token-1')
  const greeting = voicemailGreeting(4000)
  // The carrier's own verdict comes later than the beep (DetectMessageEnd waits for the end of the message).
  w.api.outcome = {
    kind: 'answer',
    audio: greeting.audio,
    realtime: true,
    silenceWhenIdle: true,
    playbackSpeed: 1,
    answeredBy: 'machine_end_beep',
    amdAfterMs: greeting.beepEndMs + 1500,
  }
  const res = await w.initiate({ machine_detection: true })
  t.equal(res.status, 200, res.text)
  const created = w.api.requests.find((r) => r.path.endsWith('/Calls.json'))
  t.match(created?.form, {
    MachineDetection: 'DetectMessageEnd',
    AsyncAmd: 'true',
    AsyncAmdStatusCallback: 'https://voice.example.test/v1/agents/carrier/machine_detection',
  })
  const call = w.api.calls.get(res.body.call_sid)!
  const row = await eventually(async () => {
    const s = await sessionOfCall(w.c, res.body.call_sid)
    return s?.status === 'ended' ? s : undefined
  }, 20_000)
  const phone = call.phone
  if (phone?.outcome !== 'connected') throw new Error('not connected')
  // The phone sends 20 ms frames on a real-time schedule from the greeting's first frame: the beep's end goes out
  // with the frame that holds it.
  const greetingSentAt = phone.call.audioStarts[0]!.dueAt
  const beepEndAt = greetingSentAt + Math.floor(greeting.beepEndMs / 20) * 20
  const welcome = w.arrivals.find((a) => a.type === 'session.start')!
  const verdicts = w.arrivals.filter((a) => a.type === 'machine_detection')
  // Held for a verdict, the welcome would come after the beep: it is asked for while the greeting still plays.
  t.ok(welcome.at < beepEndAt - 1000, 'the welcome was asked for at once, not held for a verdict')
  t.same(
    verdicts.map((v) => v.body.answered_by),
    ['machine_beep'],
    'one verdict request: the beep (the carrier later saying the same changes nothing)',
  )
  const timeToVerdict = verdicts[0]!.at - beepEndAt
  // The gateway's own detector, not the carrier's callback (sent 1.5 s after the beep): how fast is a bench figure.
  t.ok(
    timeToVerdict >= 0 && timeToVerdict < 1500,
    `verdict ${timeToVerdict.toFixed(0)} ms after the beep's last frame went out, before the carrier's`,
  )
  t.comment(
    `time to verdict: ${timeToVerdict.toFixed(0)} ms after the beep's end (${(verdicts[0]!.at - greetingSentAt).toFixed(0)} ms after the greeting began)`,
  )
  t.equal(row.answered_by, 'machine_beep', 'stored on the session')
  t.equal(row.end_reason, 'hangup', 'the backend hung up after its message')
  const afterBeep = phone.call.messages.filter((m) => m.event === 'media' && m.at > beepEndAt)
  t.ok(afterBeep.length > 0, 'the message reached the phone after the beep')
  const transcript = await w.c.gw.store.db.selectFrom('transcript_entries').selectAll().where('session_id', '=', row.id).execute()
  t.ok(
    transcript.some((e) => e.assistant_message === 'Your order is ready. Goodbye.'),
    'the message is in the transcript',
  )
  await eventually(async () => (call.amdCallbacks.length > 0 || call.status === 'completed' ? true : undefined), 5000)
  t.ok(
    call.amdCallbacks.every((cb) => cb.at > verdicts[0]!.at),
    "the verdict was the gateway's own: the carrier's came later, if at all",
  )
})

t.test("voicemail drop: the agent's voicemail_message is said by the gateway after the beep, then the call hangs up", async (t) => {
  const w = await world(t, 'amd-token-vm', (config) => {
    config.voicemail_message = 'This is Acme: your order is ready for pickup.'
  })
  const greeting = voicemailGreeting(3000)
  w.api.outcome = { kind: 'answer', audio: greeting.audio, realtime: true, silenceWhenIdle: true, playbackSpeed: 1 }
  const res = await w.initiate({ machine_detection: true })
  t.equal(res.status, 200, res.text)
  const call = w.api.calls.get(res.body.call_sid)!
  const row = await eventually(async () => {
    const s = await sessionOfCall(w.c, res.body.call_sid)
    return s?.status === 'ended' ? s : undefined
  }, 20_000)
  const phone = call.phone
  if (phone?.outcome !== 'connected') throw new Error('not connected')
  const beepEndAt = phone.call.audioStarts[0]!.dueAt + Math.floor(greeting.beepEndMs / 20) * 20
  t.equal(row.answered_by, 'machine_beep')
  t.equal(row.end_reason, 'hangup', 'hung up after the message')
  t.same(
    w.arrivals.filter((a) => a.type === 'machine_detection'),
    [],
    'the backend was not asked: the gateway left the message',
  )
  const transcript = await w.c.gw.store.db.selectFrom('transcript_entries').selectAll().where('session_id', '=', row.id).execute()
  t.ok(
    transcript.some((e) => e.assistant_message === 'This is Acme: your order is ready for pickup.'),
    'the message is in the transcript',
  )
  t.ok(
    phone.call.messages.some((m) => m.event === 'media' && m.at > beepEndAt),
    'the message reached the phone after the beep',
  )
})

t.test('a person answers: the carrier says human, the backend is asked after the welcome, the call goes on', async (t) => {
  const w = await world(t, 'amd-token-2')
  w.api.outcome = { kind: 'answer', realtime: true, silenceWhenIdle: true, playbackSpeed: 1, answeredBy: 'human', amdAfterMs: 1200 }
  const res = await w.initiate({ machine_detection: true })
  t.equal(res.status, 200, res.text)
  const verdict = await eventually(async () => w.arrivals.find((a) => a.type === 'machine_detection'), 10_000)
  t.equal(verdict.body.answered_by, 'human')
  t.equal(verdict.body.conversation_id, res.body.conversation_id)
  const welcome = w.arrivals.find((a) => a.type === 'session.start')!
  t.ok(welcome.at < verdict.at - 800, 'the welcome did not wait for the verdict')
  const row = await eventually(async () => {
    const s = await sessionOfCall(w.c, res.body.call_sid)
    return s?.answered_by === 'human' ? s : undefined
  })
  t.equal(row.status, 'connected', 'the call goes on')
  const call = w.api.calls.get(res.body.call_sid)!
  // Recorded once the gateway's reply is read, which may come after the backend's request.
  await eventually(async () => call.amdCallbacks.length > 0 || undefined, 10_000, 'the carrier to record its callback')
  t.same(
    call.amdCallbacks.map((c) => c.reply),
    [204],
  )
  if (call.phone?.outcome === 'connected') await call.phone.call.hangup()
})

t.test('without machine_detection nothing is asked of the carrier and no verdict request is sent', async (t) => {
  const w = await world(t, 'amd-token-3')
  w.api.outcome = { kind: 'answer', audio: voicemailGreeting(500).audio, realtime: false, answeredBy: 'machine_end_beep' }
  const res = await w.initiate({})
  t.equal(res.status, 200)
  const created = w.api.requests.find((r) => r.path.endsWith('/Calls.json'))
  t.equal(created?.form.MachineDetection, undefined)
  const call = w.api.calls.get(res.body.call_sid)!
  await eventually(async () => (call.phone?.outcome === 'connected' ? true : undefined))
  await new Promise((r) => setTimeout(r, 500))
  t.same(
    w.arrivals.filter((a) => a.type === 'machine_detection'),
    [],
  )
  const row = await sessionOfCall(w.c, res.body.call_sid)
  t.equal(row?.answered_by, null)
  if (call.phone?.outcome === 'connected') await call.phone.call.hangup()
})

t.test(
  "the carrier's verdict lands on replica B while the call runs on replica A: A's backend request says it",
  { skip: process.env.DATABASE_URL === undefined && 'needs DATABASE_URL: two gateway processes share one Postgres server' },
  async (t) => {
    const b = await startCarrierGateway()
    t.teardown(() => b.gw.close())
    const a = await spawnGateway({ DATABASE_URL: b.gw.db.options.databaseUrl!, PUBLIC_URL, ADMIN_TOKEN: '', ALLOW_INSECURE_WEBHOOKS: '1' })
    t.teardown(() => a.kill('SIGKILL'))
    const wsA = a.url.replace(/^http/, 'ws')
    // The voice hook and the media stream reach replica A; the carrier's callbacks reach replica B.
    const rewrite = (url: string) =>
      url.includes('/carrier/status') || url.includes('/carrier/machine_detection')
        ? b.rewrite(url)
        : url.replace(PUBLIC_URL.replace(/^https/, 'wss'), wsA).replace(PUBLIC_URL, a.url)
    const token = 'amd-token-4'
    const api = await FakeCallsApi.start({ authToken: token, stepMs: 5, rewriteUrl: rewrite })
    t.teardown(() => api.close())
    const { tenant, backend } = await newBackendTenant(t, b, token)
    const stored = await b.gw.request('PUT', `/admin/v1/organizations/${tenant.orgId}/carrier`, {
      admin: true,
      body: { account_sid: api.accountSid, auth_token: token, api_base_url: api.baseUrl },
    })
    t.equal(stored.status, 200)
    backend.reply = (req) => ({ kind: 'sse', steps: [{ data: { type: 'response.end', turn_id: req.json.turn_id } }] })
    api.outcome = { kind: 'answer', realtime: false, answeredBy: 'human', amdAfterMs: 300 }
    const res = await b.gw.request('POST', `/v1/agents/${tenant.agentId}/calls/initiate_outbound`, {
      key: tenant.apiKey,
      body: { from_phone_number: tenant.number, to_phone_number: CALLEE, machine_detection: true },
    })
    t.equal(res.status, 200, res.text)
    const verdict = await eventually(async () => backend.requests.find((q) => q.json.type === 'machine_detection'), 10_000)
    t.equal(verdict.json.answered_by, 'human')
    t.equal(verdict.json.session_id, res.body.session_id)
    const call = api.calls.get(res.body.call_sid)!
    // The fake carrier records the callback once B's reply is read, which may come after A's request to the
    // backend (B relays before it answers): wait for the record, then check it.
    await eventually(async () => call.amdCallbacks.length > 0 || undefined, 10_000, 'the carrier to record its callback')
    t.same(
      call.amdCallbacks.map((c) => c.reply),
      [204],
      'replica B took the callback',
    )
    const row = await sessionOfCall(b, res.body.call_sid)
    t.equal(row?.answered_by, 'human')
    t.not(row?.lease_owner, b.gw.gateway.sessions.keeper.owner, 'the call runs on replica A')
    if (call.phone?.outcome === 'connected') await call.phone.call.hangup()
  },
)
