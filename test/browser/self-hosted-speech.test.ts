/**
 * Self-hosted speech on a browser session, over the real WebSocket protocol: a gateway with no cloud speech key but
 * `STT_OPENAI_COMPATIBLE_URL` and `TTS_OPENAI_COMPATIBLE_URL` pointing at a local OpenAI-format speech server (a fake
 * speaking the published wire formats). The browser's microphone audio (espeak-ng speech) reaches the server as WAV
 * segments or over the Realtime socket, the server's text is the user turn the backend gets, and the reply comes
 * back as audio made by the server's `/audio/speech`.
 */
import t, { type Test } from 'tap'
import { startFakeBackend } from '../fakes/backend/fake-backend.js'
import { startFakeOpenAiSpeech, VOICED_LEVEL } from '../fakes/openai-speech/fake-openai-speech.js'
import { loadFixture } from '../fixtures/audio/signals.js'
import { eventually } from '../helpers/eventually.js'
import { startTestGateway } from '../helpers/gateway.js'
import { type BrowserSession, openBrowserSession } from '../helpers/ws-client.js'

const fake = await startFakeOpenAiSpeech({ msPerChar: 20, chunkMs: 100, chunkIntervalMs: 0 })
t.teardown(() => fake.close())
const gw = await startTestGateway({ STT_OPENAI_COMPATIBLE_URL: fake.baseUrl, TTS_OPENAI_COMPATIBLE_URL: fake.baseUrl })
t.teardown(() => gw.close())

const sse = (turnId: string, text: string) => ({
  kind: 'sse' as const,
  steps: [{ data: { type: 'response.tts', content: text, turn_id: turnId } }, { data: { type: 'response.end', turn_id: turnId } }],
})

const phrase = loadFixture('phrase.wav')

/**
 * An agent made here from the webhook template (so its speech steps were chosen for this gateway), its STT options
 * changed by `stt`, answering 'Hello.' and then `reply`; and a browser session with it past the welcome.
 */
async function session(t: Test, reply: string, stt: Record<string, unknown> = {}) {
  const created = (await gw.request('POST', '/v1/agents', { body: { template_id: 'voice-agent-webhook' } })).body
  const backend = await startFakeBackend({ secret: created.webhook_secret })
  t.teardown(() => backend.close())
  const config = structuredClone(created.config)
  const chosen = config.plugins.map((p: { use: string }) => p.use).filter((u: string) => /^(stt|tts)\./.test(u))
  config.plugins = config.plugins.map((p: { use: string; options: Record<string, unknown> }) => {
    if (p.use === 'agent.webhook') return { ...p, options: { ...p.options, url: `${backend.url}/agent` } }
    if (p.use === 'turn_manager') return { ...p, options: { ...p.options, base_timeout_ms: 800 } }
    if (p.use === 'stt.openai_compatible') return { ...p, options: { ...p.options, ...stt } }
    return p
  })
  const saved = await gw.request('POST', `/v1/agents/${created.id}`, { body: { config } })
  if (saved.status !== 200) throw new Error(saved.text)
  backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello.' : reply)
  const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: created.id } })
  if (auth.status !== 200) throw new Error(auth.text)
  const b = await openBrowserSession(gw.url, auth.body.client_session_key, { acknowledgePlayback: true })
  t.teardown(() => b.close())
  await b.waitFor((m) => m.type === 'turn.end' && m.role === 'assistant')
  return { b, backend, chosen }
}

/** The microphone: PCM16 at 8 kHz in 100 ms messages, the phrase and then a second and a half of silence. */
async function speak(b: BrowserSession): Promise<void> {
  const s = phrase.samples
  const mic = Buffer.concat([Buffer.from(s.buffer, s.byteOffset, s.byteLength), Buffer.alloc(8000 * 2 * 1.5)])
  for (let at = 0; at < mic.length; at += 1600) {
    b.send({ type: 'client.audio', content: mic.subarray(at, at + 1600).toString('base64') })
    await new Promise((r) => setTimeout(r, 20))
  }
}

t.test("segments: a browser caller's speech is transcribed by the server of our own and the reply spoken by it", async (t) => {
  const said = 'where is my parcel'
  fake.transcribe = (r) => ({ text: r.wav.samples.some((x) => Math.abs(x) > VOICED_LEVEL) ? said : '' })
  const before = fake.transcriptions.length
  const { b, backend, chosen } = await session(t, 'It is on its way.')
  t.strictSame(chosen, ['stt.openai_compatible', 'tts.openai_compatible'], 'the agent was given the servers of our own')
  t.ok(
    b.messages.some((m) => m.type === 'response.audio'),
    'the welcome was heard',
  )
  t.ok(
    fake.speech.some((s) => s.json.input === 'Hello.'),
    'spoken by the speech server',
  )
  await speak(b)
  const message = await eventually(async () => backend.requests.find((q) => q.json?.type === 'message'), 30_000)
  t.equal(message.json.text, said, "the server's text is the turn the backend got")
  await b.waitFor((m) => m.type === 'user.transcript.delta' && m.content === said)
  const reply = await b.waitFor((m) => m.type === 'response.text' && m.content === 'It is on its way.')
  await b.waitFor((m) => m.type === 'response.audio' && m.turn_id === reply.m.turn_id)
  // The VAD may cut the phrase at a pause: together, the segments the server got hold the phrase's speech.
  const truth = phrase.truth.speech[0]!
  const speechSeconds = (truth.endMs - truth.startMs) / 1000
  const voicedSeconds = () =>
    fake.transcriptions
      .slice(before)
      .filter((r) => r.wav.samples.some((x) => Math.abs(x) > VOICED_LEVEL))
      .reduce((sum, r) => sum + r.wav.samples.length / r.wav.sampleRate, 0)
  const seconds = await eventually(async () => (voicedSeconds() >= speechSeconds * 0.7 ? voicedSeconds() : undefined), 10_000)
  t.ok(seconds < speechSeconds + 1.5, `the segments are the phrase and its lead-in: ${seconds} s for ${speechSeconds} s of speech`)
  t.ok(
    fake.speech.some((s) => s.json.input === 'It is on its way.' && s.json.response_format === 'pcm'),
    'the reply was spoken by the speech server',
  )
})

t.test('realtime: the microphone streams over the Realtime socket as 24 kHz PCM and its text is the turn', async (t) => {
  const said = 'thanks for calling'
  const before = fake.realtime.length
  fake.realtimeText = (audio) => (audio.length > 24_000 ? said : '')
  const { b, backend } = await session(t, 'You are welcome.', { mode: 'realtime', model: 'gpt-4o-mini-transcribe' })
  await speak(b)
  const message = await eventually(async () => backend.requests.find((q) => q.json?.type === 'message'), 30_000)
  t.equal(message.json.text, said)
  const rt = fake.realtime[before]!
  t.match(rt.events[0], {
    session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: 24000 }, turn_detection: null } } },
  })
  const seconds = rt.turns.reduce((sum, turn) => sum + turn.length / 2 / 24000, 0)
  const truth = phrase.truth.speech[0]!
  t.ok(seconds >= ((truth.endMs - truth.startMs) / 1000) * 0.7, `the phrase went over the socket: ${seconds} s`)
  await b.waitFor((m) => m.type === 'response.text' && m.content === 'You are welcome.')
})
