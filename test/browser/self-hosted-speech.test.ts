/**
 * Self-hosted speech on a browser session, over the real WebSocket protocol: a gateway with no cloud speech key but
 * `STT_OPENAI_COMPATIBLE_URL` and `TTS_OPENAI_COMPATIBLE_URL` pointing at a local OpenAI-format speech server (a fake
 * speaking the published wire formats). The browser's microphone audio (espeak-ng speech) reaches the server as a WAV
 * segment, the server's text is the user turn the backend gets, and the reply comes back as audio made by the
 * server's `/audio/speech`.
 */
import t from 'tap'
import { startFakeBackend } from '../fakes/backend/fake-backend.js'
import { startFakeOpenAiSpeech, VOICED_LEVEL } from '../fakes/openai-speech/fake-openai-speech.js'
import { loadFixture } from '../fixtures/audio/signals.js'
import { eventually } from '../helpers/eventually.js'
import { startTestGateway } from '../helpers/gateway.js'
import { openBrowserSession } from '../helpers/ws-client.js'

const fake = await startFakeOpenAiSpeech({ msPerChar: 20, chunkMs: 100, chunkIntervalMs: 0 })
t.teardown(() => fake.close())
const gw = await startTestGateway({ STT_OPENAI_COMPATIBLE_URL: fake.baseUrl, TTS_OPENAI_COMPATIBLE_URL: fake.baseUrl })
t.teardown(() => gw.close())

const sse = (turnId: string, text: string) => ({
  kind: 'sse' as const,
  steps: [{ data: { type: 'response.tts', content: text, turn_id: turnId } }, { data: { type: 'response.end', turn_id: turnId } }],
})

t.test("a browser caller's speech is transcribed by the server of our own and the reply spoken by it", async (t) => {
  const created = (await gw.request('POST', '/v1/agents', { body: { template_id: 'voice-agent-webhook' } })).body
  const backend = await startFakeBackend({ secret: created.webhook_secret })
  t.teardown(() => backend.close())
  const config = structuredClone(created.config)
  t.strictSame(
    config.plugins.map((p: { use: string }) => p.use).filter((u: string) => /^(stt|tts)\./.test(u)),
    ['stt.openai_compatible', 'tts.openai_compatible'],
    'the agent was given the servers of our own',
  )
  config.plugins = config.plugins.map((p: { use: string; options: Record<string, unknown> }) => {
    if (p.use === 'agent.webhook') return { ...p, options: { ...p.options, url: `${backend.url}/agent` } }
    if (p.use === 'turn_manager') return { ...p, options: { ...p.options, base_timeout_ms: 800 } }
    return p
  })
  const saved = await gw.request('POST', `/v1/agents/${created.id}`, { body: { config } })
  t.equal(saved.status, 200, 'the agent is saved')
  const said = 'where is my parcel'
  fake.transcribe = (r) => ({ text: r.wav.samples.some((x) => Math.abs(x) > VOICED_LEVEL) ? said : '' })
  backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello.' : 'It is on its way.')

  const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: created.id } })
  t.equal(auth.status, 200)
  const b = await openBrowserSession(gw.url, auth.body.client_session_key, { acknowledgePlayback: true })
  t.teardown(() => b.close())
  await b.waitFor((m) => m.type === 'turn.end' && m.role === 'assistant')
  t.ok(
    b.messages.some((m) => m.type === 'response.audio'),
    'the welcome was heard',
  )
  t.equal(fake.speech[0]?.json.input, 'Hello.')

  // The microphone: PCM16 at 8 kHz in 100 ms messages, the phrase and then a second and a half of silence.
  const phrase = loadFixture('phrase.wav').samples
  const mic = Buffer.concat([Buffer.from(phrase.buffer, phrase.byteOffset, phrase.byteLength), Buffer.alloc(8000 * 2 * 1.5)])
  for (let at = 0; at < mic.length; at += 1600) {
    b.send({ type: 'client.audio', content: mic.subarray(at, at + 1600).toString('base64') })
    await new Promise((r) => setTimeout(r, 20))
  }
  const message = await eventually(async () => backend.requests.find((q) => q.json?.type === 'message'), 30_000)
  t.equal(message.json.text, said, "the server's text is the turn the backend got")
  const transcript = await b.waitFor((m) => m.type === 'user.transcript' || (m.type === 'user.transcript.delta' && m.content === said))
  t.ok(transcript, 'the browser saw its own words')
  const reply = await b.waitFor((m) => m.type === 'response.text' && m.content === 'It is on its way.')
  await b.waitFor((m) => m.type === 'response.audio' && m.turn_id === reply.m.turn_id)
  t.ok(
    fake.speech.some((s) => s.json.input === 'It is on its way.' && s.json.response_format === 'pcm'),
    'spoken by the speech server',
  )
})
