/**
 * Privacy controls end to end on phone calls, over the carrier simulator, a real gateway and its database: a card number
 * said by the caller (the STT fake times its words within the audio it heard, as the vendor does) is a marker in
 * the stored transcript, silence in the recording's caller channel over exactly those words, absent from the
 * debug logs, and as said in the backend's webhook; with nova-3 and with flux (whose TurnInfo words carry timings
 * too). And the backend's `response.recording` pause and resume.
 */
import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import wavefile from 'wavefile'
import { createLogger } from '../../core/log.js'
import { privacyLogOptions } from '../../server/log-redaction.js'
import { startTestGateway } from '../helpers/gateway.js'
import { startFakeDeepgram, transcriptsInTurn, VOICED_LEVEL } from '../fakes/deepgram/fake-deepgram.js'
import { startFakeElevenLabs } from '../fakes/elevenlabs/fake-elevenlabs.js'
import type { BackendReply } from '../fakes/backend/fake-backend.js'
import {
  eventually,
  heardAll,
  newBackendTenant,
  PUBLIC_URL,
  sessionOfCall,
  speech,
  sse,
  startRealtimeCall,
  CARD_DIGITS,
  type RealtimeCall,
  type CarrierGw,
} from './carrier-setup.js'

const RATE = 8000
/** The tolerance for where the silence starts and ends. */
const TOLERANCE_SAMPLES = (40 * RATE) / 1000

// The gateway logs at debug level, through the same logger options as `voxgate serve`, into memory.
const logLines: string[] = []
const sink = new Writable({
  write(chunk, _encoding, done) {
    logLines.push(String(chunk))
    done()
  },
})
const transcripts: string[] = []
const deepgram = await startFakeDeepgram({ apiKey: 'dg-key', script: transcriptsInTurn(transcripts) })
t.teardown(() => deepgram.close())
const elevenlabs = await startFakeElevenLabs({ apiKey: 'el-key', msPerChar: 20, chunkMs: 100, chunkIntervalMs: 0 })
t.teardown(() => elevenlabs.close())
const gw = await startTestGateway(
  {
    PUBLIC_URL,
    STT_VENDOR_A_URL: deepgram.url,
    STT_VENDOR_A_API_KEY: 'dg-key',
    TTS_VENDOR_A_URL: elevenlabs.url,
    TTS_VENDOR_A_API_KEY: 'el-key',
  },
  { log: createLogger('debug', privacyLogOptions(), sink) },
)
t.teardown(() => gw.close())
const wsBase = gw.url.replace(/^http/, 'ws')
const c: CarrierGw = {
  gw,
  rewrite: (url) => url.replace(PUBLIC_URL, gw.url).replace(PUBLIC_URL.replace(/^https/, 'wss'), wsBase),
  hookUrl: `${PUBLIC_URL}/v1/agents/carrier/twiml`,
  statusUrl: `${PUBLIC_URL}/v1/agents/carrier/status`,
}
/** A tenant with recording on; `flux` makes its agent recognise with flux instead of nova-3. */
async function recordingTenant(token: string, flux = false) {
  const made = await newBackendTenant(t, c, token, (config) => {
    if (!flux) return
    config.plugins = config.plugins.map((p: { use: string }) =>
      p.use === 'stt.vendor_a' ? { use: 'stt.vendor_a', options: { model_id: 'flux' } } : p,
    )
  })
  const org = await gw.request('PATCH', `/admin/v1/organizations/${made.tenant.orgId}`, { admin: true, body: { recording_enabled: true } })
  if (org.status !== 200) throw new Error(org.text)
  return made
}
const { tenant, backend } = await recordingTenant('privacy-token')
const flux = await recordingTenant('privacy-flux-token', true)

/** An SSE reply that sends `response.recording` first, then speaks. */
function withRecording(turnId: string, action: 'pause' | 'resume', text: string): BackendReply {
  return {
    kind: 'sse',
    steps: [
      { data: { type: 'response.recording', action, turn_id: turnId } },
      { data: { type: 'response.tts', content: text, turn_id: turnId } },
      { data: { type: 'response.end', turn_id: turnId } },
    ],
  }
}

/** The message requests the backend got for a session, in order. */
const messages = (sessionId: string, from = backend) =>
  from.requests.filter((q) => q.json?.session_id === sessionId && q.json?.type === 'message')

async function hangUpAndWaitForRecording(call: RealtimeCall, callSid: string, sessionId: string, of = tenant) {
  await call.hangup()
  await eventually(async () => ((await sessionOfCall(c, callSid))?.status === 'ended' ? true : undefined), 30_000)
  const base = `/v1/agents/${of.agentId}/sessions/${sessionId}/recording`
  const meta = await eventually(async () => {
    const m = await gw.request('GET', `${base}/metadata`, { key: of.apiKey })
    return m.status === 200 && m.body.status === 'completed' ? m.body : undefined
  }, 30_000)
  const res = await fetch(`${gw.url}${base}`, { headers: { authorization: `Bearer ${of.apiKey}` } })
  const wav = new wavefile.WaveFile(Buffer.from(await res.arrayBuffer()))
  const [caller, agent] = wav.getSamples(false, Int16Array) as unknown as [Int16Array, Int16Array]
  const details = await gw.request('GET', `/v1/agents/${of.agentId}/sessions/${sessionId}`, { key: of.apiKey })
  return { meta, caller, agent, details: details.body }
}

/** The run of zero samples around `at`. */
function zeroRun(a: Int16Array, at: number): { from: number; to: number } {
  let from = at
  let to = at
  while (from > 0 && a[from - 1] === 0) from--
  while (to < a.length && a[to] === 0) to++
  return { from, to }
}

/**
 * The card of 'my card is 4111 1111 1111 1111 thanks' is silent in the caller channel over its words and listed in
 * the metadata. Where the fake STT said the words were: the voiced part of what it heard, shared evenly among the
 * 8 words. The recording holds the same caller audio, so the same samples are voiced there (the card's words, in
 * the middle, are silenced; the first and the last word are not).
 */
function checkCardSilenced(t: Test, caller: Int16Array, meta: any): void {
  let first = -1
  let last = -1
  caller.forEach((x, i) => {
    if (Math.abs(x) <= VOICED_LEVEL) return
    if (first < 0) first = i
    last = i
  })
  t.ok(first > 0, 'the caller is in the recording')
  const slot = (last + 1 - first) / 8
  const cardFrom = Math.round(first + 3 * slot)
  const cardTo = Math.round(first + 7 * slot)
  const silence = zeroRun(caller, Math.round((cardFrom + cardTo) / 2))
  t.ok(
    Math.abs(silence.from - cardFrom) <= TOLERANCE_SAMPLES && Math.abs(silence.to - cardTo) <= TOLERANCE_SAMPLES,
    `the caller channel is silent over the card's words within 40 ms: silent ${silence.from}-${silence.to}, words ${cardFrom}-${cardTo}`,
  )
  t.ok(
    caller.subarray(first, cardFrom - TOLERANCE_SAMPLES).some((x) => Math.abs(x) > VOICED_LEVEL) &&
      caller.subarray(cardTo + TOLERANCE_SAMPLES, last + 1).some((x) => Math.abs(x) > VOICED_LEVEL),
    'the words before and after are heard',
  )
  t.equal(meta.silenced.length, 1, 'one silenced span in the metadata')
  t.equal(meta.silenced[0]?.kind, 'card')
  t.ok(Math.abs(meta.silenced[0].from_ms - (silence.from * 1000) / RATE) <= 2, 'the metadata says where: from')
  t.ok(Math.abs(meta.silenced[0].to_ms - (silence.to * 1000) / RATE) <= 2, 'the metadata says where: to')
  t.same(meta.paused, [])
}

t.test('a card number said on a phone call: a marker stored, silence over its words, no digits logged, the backend hears it', async (t) => {
  const said = 'my card is 4111 1111 1111 1111 thanks'
  backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello.' : 'Thank you.')
  transcripts.length = 0
  transcripts.push(said)
  logLines.length = 0
  const { call, callSid, row } = await startRealtimeCall(c, tenant)
  await heardAll(call)
  const marksBefore = call.marks.length
  await call.sendAudio(speech('phrase.wav', 1500))
  await eventually(async () => (messages(row.id).length > 0 ? true : undefined), 30_000)
  t.equal(messages(row.id)[0]?.json.text, said, 'the backend got the text as said (redact_webhooks is off)')
  await heardAll(call, marksBefore + 1)
  const { meta, caller, details } = await hangUpAndWaitForRecording(call, callSid, row.id)

  const users = details.transcript.map((e: { user_message: string | null }) => e.user_message).filter((m: unknown) => m !== null)
  t.same(users, ['my card is [card] thanks'], 'the stored transcript holds a marker')
  t.notMatch(JSON.stringify(details), CARD_DIGITS, 'no digit of it in the session details')

  checkCardSilenced(t, caller, meta)

  const logs = logLines.join('')
  t.ok(
    logLines.some((l) => l.includes('"level":20')),
    'debug lines were written',
  )
  t.notMatch(logs, CARD_DIGITS, 'no digit of the card in the logs')
})

t.test('flux: a card number said on a phone call is silenced over its words, timed by the TurnInfo words', async (t) => {
  const said = 'my card is 4111 1111 1111 1111 thanks'
  flux.backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello.' : 'Thank you.')
  transcripts.length = 0
  transcripts.push(said)
  const sttBefore = deepgram.connections.length
  const { call, callSid, row } = await startRealtimeCall(c, flux.tenant)
  await heardAll(call)
  const marksBefore = call.marks.length
  await call.sendAudio(speech('phrase.wav', 1500))
  await eventually(async () => (messages(row.id, flux.backend).length > 0 ? true : undefined), 30_000)
  t.equal(messages(row.id, flux.backend)[0]?.json.text, said)
  t.equal(deepgram.connections[sttBefore]?.version, 'v2', 'the call spoke flux')
  await heardAll(call, marksBefore + 1)
  const { meta, caller, details } = await hangUpAndWaitForRecording(call, callSid, row.id, flux.tenant)
  t.notMatch(JSON.stringify(details), CARD_DIGITS, 'no digit of it in the session details')
  checkCardSilenced(t, caller, meta)
})

t.test('response.recording pauses and resumes the recording and the transcript on a phone call', async (t) => {
  backend.reply = (req) => {
    const turn = req.json.turn_id
    if (req.json.type === 'session.start') return sse(turn, 'Hello.')
    const text = String(req.json.text ?? '')
    if (text.includes('pay')) return withRecording(turn, 'pause', 'Please say your card number.')
    if (text.includes('card')) return withRecording(turn, 'resume', 'Thanks.')
    return sse(turn, 'Goodbye.')
  }
  transcripts.length = 0
  transcripts.push('I want to pay', 'my card is 4111 1111 1111 1111', 'goodbye')
  const { call, callSid, row } = await startRealtimeCall(c, tenant)
  await heardAll(call)
  for (let turn = 1; turn <= 3; turn++) {
    const marks = call.marks.length
    await call.sendAudio(speech(turn === 2 ? 'phrase.wav' : 'blip.wav', 1500))
    await eventually(async () => (messages(row.id).length >= turn ? true : undefined), 30_000)
    await heardAll(call, marks + 1)
  }
  const { meta, caller, agent, details } = await hangUpAndWaitForRecording(call, callSid, row.id)

  t.equal(meta.paused.length, 1, 'one paused span')
  const from = Math.round((meta.paused[0].from_ms * RATE) / 1000)
  const to = Math.round((meta.paused[0].to_ms * RATE) / 1000)
  t.ok(to - from > 3 * RATE, `the pause covers the card said in it (${meta.paused[0].from_ms}-${meta.paused[0].to_ms} ms)`)
  const loud = [...caller.subarray(from, to).entries()].filter(([, x]) => x !== 0).map(([i]) => i + from)
  t.same(loud.length, 0, `the caller channel is silent over the pause; heard at ${loud.slice(0, 5)} ... ${loud.slice(-5)} (${loud.length})`)
  t.ok(
    agent.subarray(from, to).every((x) => x === 0),
    'the agent channel is silent over the pause',
  )
  t.ok(
    caller.subarray(0, from).some((x) => x !== 0),
    'the caller is heard before',
  )
  t.ok(
    caller.subarray(to).some((x) => x !== 0),
    'and after',
  )
  const turns = details.transcript
    .filter(
      (e: { user_message: string | null; assistant_message: string | null }) => e.user_message !== null || e.assistant_message !== 'Hello.',
    )
    .map((e: { user_message: string | null; assistant_message: string | null }) => [e.user_message, e.assistant_message])
  t.same(turns, [
    ['I want to pay', 'Please say your card number.'],
    [null, null],
    ['goodbye', 'Goodbye.'],
  ])
  t.notMatch(JSON.stringify(details), CARD_DIGITS, 'nothing of the card is stored')
})
