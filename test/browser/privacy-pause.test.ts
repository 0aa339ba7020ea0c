/**
 * Privacy controls on a browser session (the WebSocket, no Chromium): the backend's `response.recording` pauses the
 * recording and the transcript while the caller reads out a card, and resumes them. The recording is read back with
 * `wavefile`; the metadata names the paused span.
 */
import t from 'tap'
import wavefile from 'wavefile'
import { startTestGateway } from '../helpers/gateway.js'
import { openBrowserSession } from '../helpers/ws-client.js'
import { withoutWelcome } from '../helpers/quiet-agent.js'
import { startFakeBackend, type BackendReply } from '../fakes/backend/fake-backend.js'
import { eventually } from '../helpers/eventually.js'

const gw = await startTestGateway()
t.teardown(() => gw.close())
{
  const org = await gw.request('PATCH', `/admin/v1/organizations/${gw.orgId}`, { admin: true, body: { recording_enabled: true } })
  if (org.status !== 200) throw new Error(org.text)
}
const agent = (await gw.request('POST', '/v1/agents', { body: { template_id: 'voice-agent-webhook' } })).body
const backend = await startFakeBackend({ secret: agent.webhook_secret })
t.teardown(() => backend.close())
{
  // Text in, text out: no speech vendors are needed to pause a recording of the microphone.
  const config = withoutWelcome({
    ...agent.config,
    clients: { browser: true, carrier: false },
    plugins: [{ use: 'turn_manager' }, { use: 'agent.webhook', options: { url: backend.url } }],
  })
  const r = await gw.request('POST', `/v1/agents/${agent.id}`, { body: { config } })
  if (r.status !== 200) throw new Error(r.text)
}

function reply(turnId: string, text: string, action?: 'pause' | 'resume'): BackendReply {
  return {
    kind: 'sse',
    steps: [
      ...(action === undefined ? [] : [{ data: { type: 'response.recording', action, turn_id: turnId } }]),
      { data: { type: 'response.tts', content: text, turn_id: turnId } },
      { data: { type: 'response.end', turn_id: turnId } },
    ],
  }
}

backend.reply = (req) => {
  // The agent does not speak first.
  if (req.json.type === 'session.start') return { kind: 'sse', steps: [{ data: { type: 'response.end', turn_id: req.json.turn_id } }] }
  const text = String(req.json.text ?? '')
  if (text.includes('pay')) return reply(req.json.turn_id, 'Please say your card number.', 'pause')
  if (text.includes('card')) return reply(req.json.turn_id, 'Thanks.', 'resume')
  return reply(req.json.turn_id, 'Goodbye.')
}

/** 20 ms of microphone audio: a steady level (not speech, so the VAD stays quiet), PCM16 8 kHz, base64. */
const MIC_FRAME = Buffer.alloc(320)
for (let i = 0; i < 160; i++) MIC_FRAME.writeInt16LE(1500, i * 2)

t.test('response.recording pauses and resumes the recording and the transcript of a browser session', async (t) => {
  const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agent.id } })
  const client = await openBrowserSession(gw.url, auth.body.client_session_key, { acknowledgePlayback: true })
  // The microphone streams in real time for the whole session, as a browser's does: by the clock, so a late timer
  // on a loaded machine sends the frames it owes at once (as a browser's audio buffer does) instead of the call's
  // audio falling behind its wall-clock pause span.
  let frames = 0
  const waiters: { n: number; wake: () => void }[] = []
  const micStarted = performance.now()
  const mic = setInterval(() => {
    const due = Math.floor((performance.now() - micStarted) / 20) + 1
    for (; frames < due; frames++) client.send({ type: 'client.audio', content: MIC_FRAME.toString('base64') })
    for (const w of waiters.filter((x) => frames >= x.n)) w.wake()
  }, 20)
  t.teardown(() => clearInterval(mic))
  const moreFrames = (n: number) => new Promise<void>((wake) => waiters.push({ n: frames + n, wake }))

  const turnEnds = () => client.messages.filter((m) => m.type === 'turn.end' && m.role === 'assistant').length
  async function say(text: string) {
    const before = turnEnds()
    client.send({ type: 'client.response.text', content: text })
    await client.waitFor(() => turnEnds() > before, 10_000)
  }
  await moreFrames(25)
  await say('I want to pay')
  await moreFrames(25)
  await say('my card is 4111 1111 1111 1111')
  await moreFrames(25)
  await say('goodbye')
  await moreFrames(25)
  clearInterval(mic)
  client.close()

  const sessionId = await sessionOf(auth.body.conversation_id)
  const meta = await eventually(async () => {
    const m = await gw.request('GET', `/v1/agents/${agent.id}/sessions/${sessionId}/recording/metadata`)
    return m.status === 200 && m.body.status === 'completed' ? m.body : undefined
  }, 15_000)
  t.equal(meta.sample_rate, 16_000, 'browser sessions record at 16 kHz')
  t.equal(meta.paused.length, 1, 'one paused span in the metadata')
  const [span] = meta.paused
  t.ok(span.to_ms - span.from_ms >= 400, `the pause lasts while the card is read (${span.from_ms}-${span.to_ms} ms)`)
  const res = await fetch(`${gw.url}/v1/agents/${agent.id}/sessions/${sessionId}/recording`, {
    headers: { authorization: `Bearer ${gw.apiKey}` },
  })
  const wav = new wavefile.WaveFile(Buffer.from(await res.arrayBuffer()))
  const [caller, agentChannel] = wav.getSamples(false, Int16Array) as unknown as [Int16Array, Int16Array]
  const from = span.from_ms * 16
  const to = span.to_ms * 16
  t.ok(
    caller.subarray(from, to).every((x) => x === 0),
    'the microphone is silent over the pause',
  )
  t.ok(
    agentChannel.subarray(from, to).every((x) => x === 0),
    'and the agent channel',
  )
  t.ok(
    caller.subarray(Math.max(0, from - 8000), from).some((x) => x !== 0),
    'the microphone is heard before the pause',
  )
  t.ok(
    caller.subarray(to, to + 8000).some((x) => x !== 0),
    'and after the resume',
  )

  const details = (await gw.request('GET', `/v1/agents/${agent.id}/sessions/${sessionId}`)).body
  t.same(
    details.transcript.map((e: { user_message: string | null; assistant_message: string | null }) => [e.user_message, e.assistant_message]),
    [
      ['I want to pay', 'Please say your card number.'],
      [null, null],
      ['goodbye', 'Goodbye.'],
    ],
    'the turn said in the pause keeps no text',
  )
  t.equal(
    backend.requests.filter((q) => q.json?.type === 'message').at(1)?.json.text,
    'my card is 4111 1111 1111 1111',
    'the backend got it as said',
  )
})

/** The session of a conversation (one per connection). */
async function sessionOf(conversationId: string): Promise<string> {
  const list = await eventually(async () => {
    const r = await gw.request('GET', `/v1/sessions?conversation_id=${conversationId}`)
    return r.status === 200 && r.body.sessions?.length > 0 ? r.body.sessions : undefined
  }, 15_000)
  return list[0].session_id
}
