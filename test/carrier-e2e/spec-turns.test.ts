import t from 'tap'
import { fakeSampleCount } from '../fakes/elevenlabs/fake-elevenlabs.js'
import { startFakeBackend } from '../fakes/backend/fake-backend.js'
import { callTenant, eventually, newTenant, sessionOfCall, speech, sse, startVoiceWorld, type CarrierTenant } from './carrier-setup.js'
import { newCallSid } from '../fakes/carrier/phone-simulator.js'

// SPEC behaviours of turn taking and replies, end to end over a phone call: the carrier's media stream, the
// STT and TTS vendor fakes and the customer backend fake all speak over real sockets.
const { c, deepgram, elevenlabs, transcripts } = await startVoiceWorld(t)

// One backend for every tenant: these tests do not check signatures (voice-call.test.ts does).
const backend = await startFakeBackend({ secret: 'not-checked-here' })
t.teardown(() => backend.close())

/** A tenant whose agent uses the fakes; `vad` is merged into the config's `vad`. */
async function tenantWith(vad: Record<string, unknown>): Promise<CarrierTenant> {
  return newTenant(c, {
    template: 'voice-agent-webhook',
    carrier: { authToken: 'spec-turns-token' },
    config: (config) => ({
      ...config,
      vad: { ...config.vad, ...vad },
      plugins: config.plugins.map((p: { use: string; options: Record<string, unknown> }) => {
        if (p.use === 'agent.webhook') return { ...p, options: { ...p.options, url: backend.url } }
        if (p.use === 'stt.vendor_a') return { use: 'stt.vendor_a', options: { model_id: 'nova-3', language: 'en' } }
        if (p.use === 'turn_manager') return { ...p, options: { ...p.options, base_timeout_ms: 800 } }
        return p
      }),
    }),
  })
}

const withVad = await tenantWith({})
const noVad = await tenantWith({ enabled: false })

/** Places a call to `tenant`; returns the call, its session and its STT connection. */
async function connect(tenant: CarrierTenant, say: string[] = [], playbackSpeed = 1) {
  transcripts.length = 0
  transcripts.push(...say)
  const callSid = newCallSid()
  const sttBefore = deepgram.connections.length
  const r = await callTenant(c, tenant, { callSid, realtime: true, silenceWhenIdle: true, playbackSpeed })
  if (r.outcome !== 'connected') throw new Error(`call not connected: ${JSON.stringify(r)}`)
  const row = await eventually(async () => sessionOfCall(c, callSid))
  const stt = await eventually(async () => (deepgram.connections.length > sttBefore ? deepgram.connections.at(-1) : undefined))
  const waitRequest = (pred: (json: any) => boolean, timeoutMs = 10_000) =>
    eventually(async () => backend.requests.find((r) => r.json?.session_id === row.id && pred(r.json)), timeoutMs)
  const endedRow = () =>
    eventually(async () => {
      const s = await sessionOfCall(c, callSid)
      return s?.status === 'ended' ? s : undefined
    }, 10_000)
  return { call: r.call, sessionId: row.id, stt, waitRequest, endedRow }
}

/** Resolves with what `p` gives, or `timedOut` after `ms`. */
function within<T>(p: Promise<T>, ms: number): Promise<T | 'timed out'> {
  return Promise.race([p, new Promise<'timed out'>((r) => setTimeout(() => r('timed out'), ms).unref())])
}

t.test('vad.enabled false: the STT end of turn ends the turn and the words reach the backend', async (t) => {
  backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hi.' : 'Sure, a refund it is.')
  const { call, stt, waitRequest } = await connect(noVad)
  await waitRequest((j) => j.type === 'session.start')
  await eventually(async () => (call.marks.length > 0 && call.earpiece.pendingMarks().length === 0 ? true : undefined), 10_000)
  const welcomeBytes = call.receivedAudio().length
  void call.sendAudio(speech('phrase.wav', 0))
  // The vendor hears speech start, then the words with its own end of speech (speech_final).
  stt.sendSpeechStarted()
  await new Promise((r) => setTimeout(r, 300))
  const spokenAt = Date.now()
  stt.sendResults('i would like a refund', { isFinal: true, speechFinal: true })
  const msg = await waitRequest((j) => j.type === 'message', 5_000)
  t.equal(msg.json.text, 'i would like a refund')
  t.ok(Date.now() - spokenAt < 800, 'on the vendor end of turn, not a timeout')
  await eventually(async () => (call.receivedAudio().length > welcomeBytes ? true : undefined), 10_000)
  t.pass('the reply is spoken')
  await call.hangup()
})

/** The message texts the backend got for a session, in order. */
const messageTexts = (sessionId: string) =>
  backend.requests.filter((r) => r.json?.session_id === sessionId && r.json?.type === 'message').map((r) => r.json.text)

t.test('vad.enabled false: words and a Finalize answered without from_finalize end the turn base_timeout_ms later', async (t) => {
  backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hi.' : 'Okay.')
  const { call, stt, sessionId, waitRequest } = await connect(noVad)
  // Deepgram answers a Finalize with from_finalize only when it had audio left to process: here it has none.
  stt.finalizeReply = 'never'
  await waitRequest((j) => j.type === 'session.start')
  await eventually(async () => (call.marks.some((m) => m.echoedAt !== undefined) ? true : undefined), 10_000)
  stt.sendSpeechStarted()
  stt.sendResults('where is my parcel', { isFinal: true })
  const msg = await waitRequest((j) => j.type === 'message', 5_000)
  t.equal(msg.json.text, 'where is my parcel')
  t.ok(stt.controls.includes('Finalize'), 'the vendor was asked to finalize after base_timeout_ms of quiet, before the turn ended')
  t.notOk(
    stt.sent.some((m) => m.from_finalize === true || m.speech_final === true),
    'and no vendor end of turn came: the turn ended on the fallback',
  )
  // The next turn carries its own words only: the first turn's final is not said again.
  stt.sendSpeechStarted()
  stt.sendResults('and my refund', { isFinal: true, speechFinal: true })
  await eventually(async () => (messageTexts(sessionId).length >= 2 ? true : undefined), 5_000)
  t.same(messageTexts(sessionId), ['where is my parcel', 'and my refund'])
  await call.hangup()
})

t.test('vad.enabled false: a from_finalize answer after base_timeout_ms does not end the turn a second time', async (t) => {
  backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hi.' : 'Okay.')
  const { call, stt, sessionId, waitRequest } = await connect(noVad)
  // Later than the fallback (base_timeout_ms is 800 here).
  stt.finalizeReply = { lateMs: 2000 }
  await waitRequest((j) => j.type === 'session.start')
  await eventually(async () => (call.marks.some((m) => m.echoedAt !== undefined) ? true : undefined), 10_000)
  stt.sendSpeechStarted()
  stt.sendResults('where is my parcel', { isFinal: true })
  await waitRequest((j) => j.type === 'message', 5_000)
  t.notOk(
    stt.sent.some((m) => m.from_finalize === true),
    'the turn ended before the answer to its Finalize',
  )
  await eventually(async () => (stt.sent.some((m) => m.from_finalize === true) ? true : undefined), 5_000)
  // One socket, one pipeline: the next turn's message comes after whatever the late answer caused.
  stt.sendSpeechStarted()
  stt.sendResults('thanks', { isFinal: true, speechFinal: true })
  await eventually(async () => (messageTexts(sessionId).includes('thanks') ? true : undefined), 10_000)
  t.same(messageTexts(sessionId), ['where is my parcel', 'thanks'], 'the parcel turn was committed once')
  await call.hangup()
})

t.test('vad.enabled false: STT speech interrupts a reply once words are heard; a wordless start does not', async (t) => {
  const long = 'Let me read you the whole list of our opening hours for every single day of the week, one by one.'
  backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? long : 'Sure.')
  const { call, stt } = await connect(noVad)
  await eventually(async () => (call.earpiece.queuedMs() > 500 ? true : undefined), 10_000)
  stt.sendSpeechStarted()
  // Longer than min_interruption_ms (400), shorter than base_timeout_ms (800) after which a wordless start is noise.
  await new Promise((r) => setTimeout(r, 550))
  t.equal(call.clears.length, 0, 'a speech start without words (a cough) does not cut the agent off')
  stt.sendResults('stop please', { isFinal: false })
  await eventually(async () => (call.clears.length > 0 ? true : undefined), 5_000)
  t.pass('words cut the agent off')
  await call.hangup()
})

t.test('response.hangup: the caller talking over the farewell does not stop it; the session ends after it', async (t) => {
  // ~4 s of speech (the fake speaks 20 ms per character), so the caller's second phrase overlaps it.
  const farewell =
    'Thank you for calling, your refund is on its way and should reach your account within five working days. ' +
    'If anything else comes up, just call us again. We wish you a very pleasant day. Goodbye.'
  backend.reply = (req) =>
    req.json.type === 'session.start'
      ? sse(req.json.turn_id, 'Hi.')
      : req.json.text === 'that is all, bye'
        ? { kind: 'sse', steps: [{ data: { type: 'response.hangup', content: farewell, turn_id: req.json.turn_id } }] }
        : sse(req.json.turn_id, 'Answered.')
  const { call, waitRequest, endedRow } = await connect(withVad, ['that is all, bye', 'wait, one more thing'])
  await waitRequest((j) => j.type === 'session.start')
  await eventually(async () => (call.marks.some((m) => m.echoedAt !== undefined) ? true : undefined), 10_000)
  void call.sendAudio(speech('two-phrases.wav', 500))
  await waitRequest((j) => j.type === 'message' && j.text === 'that is all, bye')
  // The farewell is playing; the caller speaks over it for longer than min_interruption_ms.
  await eventually(async () => (call.earpiece.queuedMs() > 500 ? true : undefined), 10_000)
  void call.sendAudio(speech('two-phrases.wav', 300))
  const end = await within(call.ended, 15_000)
  t.not(end, 'timed out', 'the gateway ended the call')
  if (end !== 'timed out') t.equal(end.by, 'server')
  t.same(call.clears, [], 'the farewell was never cleared')
  t.ok(call.marks.length > 0 && call.marks.every((m) => m.echoedAt !== undefined && !m.cleared), 'every mark played before the close')
  const row = await endedRow()
  t.equal(row.end_reason, 'hangup')
})

/** Every text the gateway sent the TTS fake so far, over all its connections, in order. */
const spokenText = () =>
  elevenlabs.connections
    .flatMap((connection) => connection.messages)
    .map((m) => (typeof m.text === 'string' ? m.text : ''))
    .join('')

t.test("a backend's response.tts in reply to a data request is spoken", async (t) => {
  backend.reply = (req) =>
    req.json.type === 'data'
      ? { kind: 'json', body: { type: 'response.tts', content: 'You pressed five, connecting you now.', turn_id: req.json.turn_id } }
      : sse(req.json.turn_id, 'Hi.')
  const { call, waitRequest } = await connect(withVad)
  await waitRequest((j) => j.type === 'session.start')
  await eventually(async () => (call.marks.length > 0 && call.earpiece.pendingMarks().length === 0 ? true : undefined), 10_000)
  const heard = call.receivedAudio().length
  const spokenBefore = spokenText()
  call.sendDtmf('5')
  await waitRequest((j) => j.type === 'data' && j.data?.dtmf === '5')
  const line = 'You pressed five, connecting you now.'
  // What the gateway asked the TTS to say after the keypress: the backend's line, not a fallback.
  const said = await eventually(async () => {
    const now = spokenText().slice(spokenBefore.length)
    return now.includes('now.') ? now : undefined
  }, 5_000)
  t.equal(said.trim(), line, 'the TTS was given the data reply, word for word')
  // The fake speaks 20 ms per character, one mu-law byte a sample: all of it reaches the caller.
  const expected = fakeSampleCount('ulaw_8000', line, 20)
  const got = await eventually(async () => {
    const n = call.receivedAudio().length - heard
    return n >= expected ? n : undefined
  }, 5_000)
  t.ok(got < expected + 2 * 160, `the caller heard the line's ${expected} bytes of audio (${got}, at most the last frame padded)`)
  await call.hangup()
})
