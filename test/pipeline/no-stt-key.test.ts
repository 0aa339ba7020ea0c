import t from 'tap'
import { startTestGateway } from '../helpers/gateway.js'
import { MemoryTransport } from '../helpers/memory-transport.js'
import type { PipelineEvent } from '../../pipeline/index.js'

// A fresh machine: no vendor keys at all. The default agent (scripted demo, offline speech) must still run.
const gw = await startTestGateway()
t.teardown(() => gw.close())

t.test('without an STT key a session still runs: welcome, typed text, one clear notice', async (t) => {
  const agent = (await gw.request('POST', '/v1/agents', { body: {} })).body
  const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agent.id } })
  const transport = new MemoryTransport({ input: 'pcm_8000', output: 'pcm_16000' })
  const r = await gw.gateway.sessions.open(auth.body.client_session_key, transport, { ipAddress: null, countryCode: null })
  t.ok(r.ok)
  if (!r.ok) return
  const session = r.session
  const notice = await transport.waitFor((e) => e.type === 'notice')
  t.match(notice, { code: 'stt_not_configured', message: /speech recognition is not configured/ })
  t.match(
    notice,
    { message: /STT_VENDOR_A_API_KEY or STT_VENDOR_B_API_KEY or STT_OPENAI_COMPATIBLE_URL/ },
    'the notice names the variables that would configure it, the server of your own among them',
  )
  const welcome = await transport.waitFor((e): e is Extract<PipelineEvent, { type: 'assistant.text' }> => e.type === 'assistant.text')
  t.match(welcome.content, /Hello/, 'the welcome turn is spoken')
  // Audio keeps coming (a microphone is open); it is dropped, and the notice is not repeated.
  for (let i = 0; i < 50; i++) session.input.pushAudio(Buffer.alloc(320))
  session.input.userText('say the word pineapple')
  const reply = await transport.waitFor(
    (e): e is Extract<PipelineEvent, { type: 'assistant.text' }> => e.type === 'assistant.text' && e !== welcome,
    20_000,
  )
  t.equal(reply.content, 'You said: say the word pineapple', 'the scripted agent answered the typed text')
  const audio = await transport.waitFor((e) => e.type === 'audio' && e.turnId === reply.turnId, 20_000)
  t.ok(audio, 'offline speech produced audio for the reply')
  t.equal(transport.events.filter((e) => e.type === 'notice' && e.code === 'stt_not_configured').length, 1, 'said once')
  t.notOk(session.isEnded, 'the session is not ended for it')
  await session.end('hangup')
})
