import t from 'tap'
import { startVoiceHarness, speak, silence } from '../helpers/voice-harness.js'
import type { PipelineEvent } from '../../pipeline/index.js'

const h = await startVoiceHarness({ ttsChunkIntervalMs: 40 })
t.teardown(() => h.close())

type Ev<T extends PipelineEvent['type']> = Extract<PipelineEvent, { type: T }>
const is =
  <T extends PipelineEvent['type']>(type: T, pred: (e: Ev<T>) => boolean = () => true) =>
  (e: PipelineEvent): e is Ev<T> =>
    e.type === type && pred(e as Ev<T>)

function sse(turnId: string, ...texts: string[]) {
  return {
    kind: 'sse' as const,
    steps: [
      ...texts.map((content) => ({ data: { type: 'response.tts', content, turn_id: turnId } })),
      { data: { type: 'response.end', turn_id: turnId } },
    ],
  }
}

t.test('welcome turn, then a spoken turn reaches the backend and the SSE reply becomes audio', async (t) => {
  h.backend.reply = (req) => {
    if (req.json.type === 'session.start') return sse(req.json.turn_id, 'Hello, how can I help?')
    return sse(req.json.turn_id, 'Your invoice is on its way.', ' Anything else?')
  }
  const start = h.backend.requests.length
  h.transcripts.push('please send me the invoice')
  const { session, transport } = await h.open()
  const welcomeReq = await h.backend.request(start)
  t.equal(welcomeReq.json.type, 'session.start')
  t.ok(welcomeReq.signatureValid, 'welcome request signed')
  t.equal(welcomeReq.json.session_id, session.id)
  t.equal(welcomeReq.json.conversation_id, session.conversationId)
  const welcomeEnd = await transport.waitFor(is('turn.end', (e) => e.role === 'assistant'))
  t.equal(welcomeEnd.turnId, welcomeReq.json.turn_id, 'the welcome turn ends once its audio has played')

  await silence(session, 300)
  await speak(session, 'two-phrases.wav')
  await silence(session, 1500)
  const msgReq = await h.backend.request(start + 1)
  t.equal(msgReq.json.type, 'message')
  t.equal(msgReq.json.text, 'please send me the invoice')
  t.ok(msgReq.signatureValid)
  const userTranscript = await transport.waitFor(is('user.transcript'))
  t.equal(userTranscript.content, 'please send me the invoice')
  t.match(userTranscript.turnId, /^user-/)
  const reply = await transport.waitFor(is('turn.end', (e) => e.role === 'assistant' && e.turnId === msgReq.json.turn_id))
  const audio = transport.events.filter(is('audio', (e) => e.turnId === reply.turnId))
  t.ok(audio.length > 0, `reply audio delivered (${audio.length} chunks)`)
  const ids = audio.map((a) => a.chunkId)
  t.same(
    ids,
    [...ids].sort((a, b) => a - b),
    'chunk ids increase',
  )
  const text = transport.events.filter(is('assistant.text', (e) => e.turnId === reply.turnId))
  t.same(
    text.map((e) => e.content),
    ['Your invoice is on its way. Anything else?'],
  )
  t.ok(transport.events.some(is('response.end', (e) => e.turnId === reply.turnId)))
  await session.end('hangup')
  const details = await h.gw.request('GET', `/v1/agents/${h.agent.id}/sessions/${session.id}`)
  t.same(
    details.body.transcript.map((x: { user_message: string | null; assistant_message: string | null }) => [
      x.user_message,
      x.assistant_message,
    ]),
    [
      [null, 'Hello, how can I help?'],
      ['please send me the invoice', 'Your invoice is on its way. Anything else?'],
    ],
    'transcript saved once per turn, nothing lost or duplicated',
  )
  t.type(details.body.transcript[1].latency_ms, 'number')
  t.ok(details.body.tts_duration_seconds > 0)
  t.ok(details.body.transcription_duration_seconds > 0)
})

t.test('barge-in mid-reply aborts the request, clears playback and truncates the transcript', async (t) => {
  const start = h.backend.requests.length
  h.backend.reply = (req) => {
    if (req.json.type === 'session.start') return { kind: 'status', status: 204 }
    // A long reply streamed slowly, so the caller can interrupt it while the request is still open.
    return {
      kind: 'sse',
      steps: [
        {
          data: {
            type: 'response.tts',
            content: 'Let me read you the whole list of our opening hours for every single day of the week.',
            turn_id: req.json.turn_id,
          },
        },
        { delayMs: 5000 },
        { data: { type: 'response.end', turn_id: req.json.turn_id } },
      ],
    }
  }
  h.transcripts.push('what are your opening hours', 'stop')
  const { session, transport } = await h.open()
  await silence(session, 200)
  await speak(session, 'blip.wav')
  await silence(session, 1200)
  const req = await h.backend.request(start + 1)
  t.equal(req.json.text, 'what are your opening hours')
  await transport.waitFor(is('audio', (e) => e.turnId === req.json.turn_id))
  // The caller has heard about 0.5 s when they speak up (marks for the first chunks come back).
  await new Promise((r) => setTimeout(r, 500))
  for (const a of transport.events.filter(is('audio', (e) => e.turnId === req.json.turn_id)).slice(0, 5))
    session.input.markPlayed(a.chunkId)
  await speak(session, 'phrase.wav')
  const clear = await transport.waitFor(is('clear_playback'))
  t.equal(clear.turnId, req.json.turn_id)
  t.equal(await req.closed, 'aborted', 'the in-flight webhook request was aborted')
  const clearIndex = transport.events.indexOf(clear)
  const userStart = transport.events.findIndex((e, i) => i > clearIndex && e.type === 'turn.start' && e.role === 'user')
  t.ok(userStart > clearIndex, 'turn.start role user follows the clear (browsers stop playback on it)')
  const lateAudio = transport.events.slice(clearIndex + 1).filter(is('audio', (e) => e.turnId === req.json.turn_id))
  t.equal(lateAudio.length, 0, 'no audio of the interrupted turn after the clear')
  await silence(session, 1500)
  await h.backend.request(start + 2)
  await session.end('hangup')
  const details = await h.gw.request('GET', `/v1/agents/${h.agent.id}/sessions/${session.id}`)
  const interrupted = details.body.transcript.find((x: { user_message: string }) => x.user_message === 'what are your opening hours')
  t.ok(interrupted, 'the interrupted exchange is in the transcript')
  const full = 'Let me read you the whole list of our opening hours for every single day of the week.'
  t.ok(
    interrupted.assistant_message === null || interrupted.assistant_message.length < full.length,
    `truncated to what was heard: ${JSON.stringify(interrupted.assistant_message)}`,
  )
  t.ok(full.startsWith(interrupted.assistant_message ?? ''), 'a prefix of the reply')
})

t.test('a short blip does not cut the agent off (false barge-in rule)', async (t) => {
  const start = h.backend.requests.length
  h.backend.reply = (req) =>
    sse(req.json.turn_id, 'This is a fairly long welcome message that keeps talking for a while so the caller can cough.')
  const { session, transport } = await h.open({ plugins: undefined })
  await h.backend.request(start)
  await transport.waitFor(is('audio'))
  // 120 ms of loud noise-like speech onset, far below min_interruption_ms (400 ms).
  await speak(session, 'blip.wav', 8)
  await silence(session, 400)
  t.notOk(transport.events.some(is('clear_playback')), 'no clear for a blip')
  await transport.waitFor(
    is('turn.end', (e) => e.role === 'assistant'),
    15_000,
  )
  await session.end('hangup')
})

t.test('response.hangup plays the farewell, then ends the session', async (t) => {
  h.backend.reply = (req) => ({
    kind: 'sse',
    steps: [{ data: { type: 'response.hangup', content: 'Goodbye and thanks for calling.', turn_id: req.json.turn_id } }],
  })
  const { session, transport } = await h.open()
  const hangup = await transport.waitFor(is('hangup'))
  t.equal(hangup.reason, 'agent_hangup')
  const audioBefore = transport.events.filter(is('audio')).length
  t.ok(audioBefore > 0, 'the farewell was spoken before the hangup')
  t.equal(await session.ended, 'hangup')
  t.same(transport.closes, ['hangup'])
})

t.test('welcome with interruptions disabled: speech during it waits for the welcome to finish', async (t) => {
  const start = h.backend.requests.length
  h.backend.reply = (req) => {
    if (req.json.type === 'session.start')
      return sse(req.json.turn_id, 'Welcome to the support line. Please listen to this important notice about your data.')
    return sse(req.json.turn_id, 'Sure.')
  }
  h.transcripts.push('hello')
  const cfg = structuredClone(h.agent.config)
  cfg.plugins.find((p: { use: string }) => p.use === 'turn_manager').options.disable_interruptions_during_welcome = true
  const { session, transport } = await h.open({ plugins: cfg.plugins })
  const welcome = await h.backend.request(start)
  await transport.waitFor(is('audio'))
  await speak(session, 'phrase.wav')
  await silence(session, 1200)
  t.notOk(transport.events.some(is('clear_playback')), 'the welcome was not interrupted')
  const welcomeEnd = await transport.waitFor(
    is('turn.end', (e) => e.role === 'assistant' && e.turnId === welcome.json.turn_id),
    15_000,
  )
  const msg = await h.backend.request(start + 1)
  t.equal(msg.json.text, 'hello', 'the words spoken during the welcome are answered after it')
  t.ok(
    transport.events.indexOf(welcomeEnd) <
      transport.events.findIndex(is('turn.start', (e) => e.role === 'assistant' && e.turnId === msg.json.turn_id)),
  )
  await session.end('hangup')
})

t.test('push-to-talk: audio reaches STT only while pressed; release ends the turn', async (t) => {
  const start = h.backend.requests.length
  h.backend.reply = (req) => (req.json.type === 'session.start' ? { kind: 'status', status: 204 } : sse(req.json.turn_id, 'Got it.'))
  h.transcripts.push('push to talk works')
  const cfg = structuredClone(h.agent.config)
  cfg.clients = { browser: true, carrier: false }
  cfg.plugins.find((p: { use: string }) => p.use === 'turn_manager').options.trigger = 'push_to_talk'
  const connections = h.deepgram.connections.length
  const { session, transport } = await h.open({ clients: cfg.clients, plugins: cfg.plugins })
  await h.backend.request(start)
  while (h.deepgram.connections.length === connections) await new Promise((r) => setTimeout(r, 10))
  const conn = h.deepgram.connections.at(-1)!
  await speak(session, 'blip.wav', 8)
  const before = conn.audio.length
  session.input.pushToTalk(true)
  const userStart = await transport.waitFor(is('turn.start', (e) => e.role === 'user'))
  await speak(session, 'phrase.wav', 8)
  session.input.pushToTalk(false)
  const msg = await h.backend.request(start + 1)
  t.equal(msg.json.text, 'push to talk works')
  t.ok(conn.audio.length > before, 'audio sent while pressed')
  t.equal(before, 0, 'nothing was sent before the press')
  const transcript = await transport.waitFor(is('user.transcript'))
  t.equal(transcript.turnId, userStart.turnId)
  await session.end('hangup')
})

t.test('typed text, data and DTMF; no STT key still runs the session', async (t) => {
  const start = h.backend.requests.length
  h.backend.reply = (req) => {
    if (req.json.type === 'data')
      return { kind: 'json', body: { type: 'response.data', content: { ok: req.json.data }, turn_id: req.json.turn_id } }
    if (req.json.type === 'session.start') return { kind: 'status', status: 204 }
    return sse(req.json.turn_id, 'Typed reply.')
  }
  const { session, transport } = await h.open()
  await h.backend.request(start)
  session.input.userText('   ')
  session.input.userText('I typed this')
  const msg = await h.backend.request(start + 1)
  t.equal(msg.json.type, 'message')
  t.equal(msg.json.text, 'I typed this', 'blank text ignored, typed text relayed')
  session.input.dtmf('5')
  const dtmf = await h.backend.request(start + 2)
  t.equal(dtmf.json.type, 'data')
  t.same(dtmf.json.data, { dtmf: '5' })
  const data = await transport.waitFor(is('data'))
  t.same(data.content, { ok: { dtmf: '5' } })
  await session.end('hangup')
})
