/**
 * The published browser SDK (`@layercode/js-sdk` 2.8.10, its message handling and player timing ported in
 * test/fakes/layercode-sdk) against a real gateway: the SDK stops its playback on every user `turn.start`, so a
 * reply that may not be interrupted must be heard before the caller's turn is announced; and its
 * `replay_finished` names no turn, so a late one must not end a newer turn before that turn's audio had time to play.
 */
import t from 'tap'
import { startVoiceHarness } from '../helpers/voice-harness.js'
import { loadFixture } from '../fixtures/audio/signals.js'
import { LayercodeClientModel } from '../fakes/layercode-sdk/layercode-client.js'

const h = await startVoiceHarness()
t.teardown(() => h.close())

const WELCOME = 'Welcome to the support line. Please listen to this short notice about how we handle your data today.'
/** About 9 s of speech (the speech fake: 20 ms per character), long enough to speak over. */
const LONG_WELCOME = `${WELCOME} Calls may be recorded for training, and you can ask us to delete a recording at any time at all. ${WELCOME} Thank you for your patience.`
const ANSWER = 'Your order ships tomorrow.'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Replies: the welcome to session.start, ANSWER (or `message`) to a message. */
function replies(
  message: (turnId: string) => { data: unknown }[] = (id) => [{ data: { type: 'response.tts', content: ANSWER, turn_id: id } }],
  welcome = WELCOME,
) {
  h.backend.reply = (req) => ({
    kind: 'sse',
    steps:
      req.json.type === 'session.start'
        ? [
            { data: { type: 'response.tts', content: welcome, turn_id: req.json.turn_id } },
            { data: { type: 'response.end', turn_id: req.json.turn_id } },
          ]
        : [...message(req.json.turn_id), { data: { type: 'response.end', turn_id: req.json.turn_id } }],
  })
}

/** A session with `turnManager` options, driven by the SDK model. */
async function sdkSession(turnManager: Record<string, unknown>) {
  const cfg = structuredClone(h.agent.config)
  const tm = cfg.plugins.find((p: { use: string }) => p.use === 'turn_manager')
  Object.assign(tm.options, turnManager)
  const auth = await h.gw.request('POST', '/v1/agents/web/authorize_session', {
    body: { agent_id: h.agent.id, config: { plugins: cfg.plugins } },
  })
  if (auth.status !== 200) throw new Error(auth.text)
  const sdk = new LayercodeClientModel(
    `${h.gw.url.replace(/^http/, 'ws')}/v1/agents/web/websocket?client_session_key=${encodeURIComponent(auth.body.client_session_key)}`,
  )
  await sdk.opened()
  return sdk
}

/** When the SDK's player went dry after `turnId`'s audio (its `replay_finished`), and whether any of it was cut. */
function heard(sdk: LayercodeClientModel, turnId: string) {
  const spans = sdk.wavPlayer.played.filter((s) => s.trackId === turnId)
  return { spans, cut: spans.some((s) => s.cut), endedAt: Math.max(...spans.map((s) => s.endedAt)) }
}

/** Everything the server said about user turns before `at`. */
function userTurnNews(sdk: LayercodeClientModel, before: number) {
  return sdk.received
    .filter((x) => x.at < before)
    .map((x) => x.m)
    .filter((m) => (m.type === 'turn.start' && m.role === 'user') || m.type.startsWith('user.transcript'))
}

/** Sends 8 kHz PCM16 as `client.audio` frames of 100 ms, in real time. */
async function stream(sdk: LayercodeClientModel, pcm: Buffer) {
  for (let i = 0; i < pcm.length; i += 1600) {
    sdk._wsSend({ type: 'client.audio', content: pcm.subarray(i, i + 1600).toString('base64') })
    await sleep(100)
  }
}

/** The speech of a fixture (with 100 ms around it) as 8 kHz PCM16. */
function speechOf(fixture: string): Buffer {
  const f = loadFixture(fixture)
  const words = f.truth.speech[0]!
  const from = Math.max(0, Math.round(((words.startMs - 100) * f.sampleRate) / 1000))
  const to = Math.round(((words.endMs + 100) * f.sampleRate) / 1000)
  const samples = f.samples.subarray(from, to)
  return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength)
}

t.test('protected welcome (disable_interruptions_during_welcome): typed text waits until the SDK has played the welcome', async (t) => {
  replies()
  const start = h.backend.requests.length
  const sdk = await sdkSession({ disable_interruptions_during_welcome: true })
  t.teardown(() => sdk.close())
  const welcome = (await h.backend.request(start)).json.turn_id as string
  await sdk.waitFor((m) => m.type === 'response.audio' && m.turn_id === welcome)
  await sleep(400)
  // Typed on the socket while the welcome plays (the repo's client does this; the SDK's own call stops its
  // player first, see the last test).
  const typedAt = Date.now()
  sdk._wsSend({ type: 'client.response.text', content: 'when does my order ship' })
  const msg = await h.backend.request(start + 1, 20_000)
  const askedAt = Date.now()
  t.equal(msg.json.text, 'when does my order ship', 'the typed text is answered')
  const w = heard(sdk, welcome)
  t.notOk(w.cut, 'the SDK played the welcome to its end')
  t.ok(w.endedAt - typedAt > 1_000, `the welcome went on after the text was typed (${w.endedAt - typedAt} ms)`)
  const report = sdk.sent.find((x) => x.m.type === 'trigger.response.audio.replay_finished' && x.at >= w.endedAt)
  t.ok(report, 'the SDK reported the welcome played')
  t.same(userTurnNews(sdk, report!.at), [], 'no user turn.start or transcript before the welcome was heard')
  const userStart = await sdk.waitFor((m) => m.type === 'turn.start' && m.role === 'user')
  t.ok(userStart.at >= report!.at, 'the user turn is announced after the report')
  const transcript = await sdk.waitFor((m) => m.type === 'user.transcript')
  t.equal(transcript.m.content, 'when does my order ship')
  t.ok(askedAt >= report!.at, 'the backend is asked only once the welcome was heard')
  await sdk.waitFor((m) => m.type === 'response.audio' && m.turn_id === msg.json.turn_id)
  const a = sdk.wavPlayer.played.find((s) => s.trackId === msg.json.turn_id)
  t.ok(a !== undefined && a.startedAt >= w.endedAt, 'the answer plays after the welcome')
})

t.test('allow_interruptions false: speech during a reply is announced after the SDK played it, then answered', async (t) => {
  replies(undefined, LONG_WELCOME)
  const start = h.backend.requests.length
  h.transcripts.push('hello there')
  const sdk = await sdkSession({ allow_interruptions: false })
  t.teardown(() => sdk.close())
  const welcome = (await h.backend.request(start)).json.turn_id as string
  await sdk.waitFor((m) => m.type === 'response.audio' && m.turn_id === welcome)
  await stream(sdk, speechOf('phrase.wav'))
  const saidAt = Date.now()
  await stream(sdk, Buffer.alloc(1_200 * 16))
  const msg = await h.backend.request(start + 1, 20_000)
  t.equal(msg.json.text, 'hello there', 'the words spoken over the reply are answered')
  const w = heard(sdk, welcome)
  t.ok(w.endedAt > saidAt, `the reply was still playing when the caller finished speaking (${w.endedAt - saidAt} ms more)`)
  t.notOk(w.cut, 'the SDK played the reply to its end')
  const report = sdk.sent.find((x) => x.m.type === 'trigger.response.audio.replay_finished' && x.at >= w.endedAt)
  t.ok(report, 'the SDK reported it played')
  t.same(userTurnNews(sdk, report!.at), [], 'no user turn.start or transcript before it was heard')
  const news = userTurnNews(sdk, Date.now() + 1).map((m) => m.type)
  t.equal(news[0], 'turn.start', 'then the user turn: turn.start first')
  t.ok(news.includes('user.transcript'), 'and its transcript')
})

t.test('a replay_finished without turn_id that arrives early in a farewell does not cut it', async (t) => {
  replies((id) => [{ data: { type: 'response.hangup', content: 'Thank you for calling, goodbye and have a lovely day.', turn_id: id } }])
  const start = h.backend.requests.length
  const sdk = await sdkSession({})
  t.teardown(() => sdk.close())
  const welcome = (await h.backend.request(start)).json.turn_id as string
  await sdk.waitFor((m) => m.type === 'turn.end' && m.role === 'assistant' && m.turn_id === welcome, 20_000)
  sdk._wsSend({ type: 'client.response.text', content: 'that is all, bye' })
  const farewell = (await h.backend.request(start + 1)).json.turn_id as string
  const first = await sdk.waitFor((m) => m.type === 'response.audio' && m.turn_id === farewell)
  await sdk.waitFor((m) => m.type === 'response.end' && m.turn_id === farewell)
  // All of the farewell's audio is out by now (the speech fake answers at once).
  await sleep(200)
  // A report from the player about what it played before (it ran dry just before the farewell reached it).
  sdk._wsSend({ type: 'trigger.response.audio.replay_finished', reason: 'completed' })
  const closed = await new Promise<number>((resolve) => sdk.ws.once('close', () => resolve(Date.now())))
  const f = heard(sdk, farewell)
  const farewellMs = f.endedAt - f.spans[0]!.startedAt
  t.ok(farewellMs > 800, `the farewell is ${farewellMs} ms of audio`)
  t.ok(closed >= f.endedAt - 100, `the session closed after the farewell had time to play (${closed - first.at} ms after its first audio)`)
  t.notOk(f.cut, 'the farewell played to its end')
})

t.test("the SDK's own sendClientResponseText stops its player first; the text is answered at once", async (t) => {
  replies()
  const start = h.backend.requests.length
  const sdk = await sdkSession({ disable_interruptions_during_welcome: true })
  t.teardown(() => sdk.close())
  const welcome = (await h.backend.request(start)).json.turn_id as string
  await sdk.waitFor((m) => m.type === 'response.audio' && m.turn_id === welcome)
  await sleep(1_200)
  const typedAt = Date.now()
  await sdk.sendClientResponseText('when does my order ship')
  const msg = await h.backend.request(start + 1, 20_000)
  const askedAt = Date.now()
  t.ok(heard(sdk, welcome).cut, 'the SDK cut the welcome itself (client side: no server can keep it playing)')
  t.ok(askedAt - typedAt < 1_000, `answered without waiting for the rest of the welcome (${askedAt - typedAt} ms)`)
  t.equal(msg.json.text, 'when does my order ship')
})
