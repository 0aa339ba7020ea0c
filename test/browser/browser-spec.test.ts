import t from 'tap'
import { openBrowserSession } from '../helpers/ws-client.js'
import { startVoiceHarness } from '../helpers/voice-harness.js'

// SPEC behaviours of the browser channel end to end: a real gateway, its browser WebSocket, the speech-vendor
// fakes and a customer-backend fake. The client here is a bare socket, so each test decides what it sends.
const h = await startVoiceHarness()
t.teardown(() => h.close())

const WELCOME = 'Welcome to the support line, it is good to hear from you, and we will be with you in just a moment now.'

h.backend.reply = (req) => ({
  kind: 'sse',
  steps: [
    ...(req.json.type === 'session.start' ? [{ data: { type: 'response.tts', content: WELCOME, turn_id: req.json.turn_id } }] : []),
    { data: { type: 'response.end', turn_id: req.json.turn_id } },
  ],
})

/** Opens a browser socket for a new session; it does not say client.ready by itself. */
async function browser() {
  const auth = await h.gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: h.agent.id } })
  if (auth.status !== 200) throw new Error(auth.text)
  return openBrowserSession(h.gw.url, auth.body.client_session_key, { ready: false })
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

t.test('the welcome waits for client.ready, so the browser hears its first words', async (t) => {
  const start = h.backend.requests.length
  const b = await browser()
  const welcome = await h.backend.request(start)
  t.equal(welcome.json.type, 'session.start')
  // The reply and its speech are ready long before this; nothing reaches a client that cannot play yet.
  await sleep(700)
  t.notOk(b.types().includes('response.audio'), `no audio before client.ready (got ${JSON.stringify(b.types())})`)
  const readyAt = Date.now()
  b.send({ type: 'client.ready' })
  const first = await b.waitFor((m) => m.type === 'response.audio')
  t.ok(first.at >= readyAt, 'audio follows client.ready')
  t.equal(first.m.turn_id, welcome.json.turn_id)
  const types = b.types()
  t.ok(types.indexOf('turn.start') < types.indexOf('response.audio'), 'in order: turn.start, then audio')
  b.close()
})

t.test('a client that never says client.ready gets the welcome after 3 s anyway', async (t) => {
  const b = await browser()
  const first = await b.waitFor((m) => m.type === 'response.audio', 8_000)
  const waited = first.at - b.openedAt
  t.ok(waited >= 2_800 && waited < 5_000, `sent after the 3 s bound (${waited} ms)`)
  b.close()
})

t.test('replay_finished without turn_id applies to the current assistant turn', async (t) => {
  const start = h.backend.requests.length
  const b = await browser()
  b.send({ type: 'client.ready' })
  const welcome = await h.backend.request(start)
  const turnId = welcome.json.turn_id
  await b.waitFor((m) => m.type === 'response.end' && m.turn_id === turnId)
  await b.waitFor((m) => m.type === 'response.audio')
  // The welcome is ~2 s of speech (the fake speaks 20 ms per character); the gateway would otherwise wait for it.
  // A report without turn_id counts in full once the turn's audio has been out for a second (sooner, it could be
  // about an older turn: see the next test).
  await sleep(700)
  b.send({ type: 'trigger.response.audio.replay_finished', reason: 'completed', turn_id: 'assistant-not-this-one' })
  await sleep(400)
  t.notOk(
    b.messages.some((m) => m.type === 'turn.end' && m.role === 'assistant'),
    'a report naming another turn is ignored',
  )
  const sentAt = Date.now()
  b.send({ type: 'trigger.response.audio.replay_finished', reason: 'completed' })
  const end = await b.waitFor((m) => m.type === 'turn.end' && m.role === 'assistant', 1_500)
  t.equal(end.m.turn_id, turnId)
  t.ok(end.at - sentAt < 1_000, `the turn ends on the report (${end.at - sentAt} ms)`)
  t.same(
    b.messages.filter((m) => m.type === 'error'),
    [],
    'no error for the report without turn_id',
  )
  b.close()
})
