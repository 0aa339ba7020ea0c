/**
 * What an agent's fallback settings do over a session, on browser sessions: the messages in turn, what
 * happens after N consecutive failures (hang up, transfer), the holding phrase for a slow backend, and barge-in
 * during a fallback or a holding phrase. One gateway; the agent's settings change per test.
 */
import t, { type Test } from 'tap'
import { startVoiceHarness } from '../helpers/voice-harness.js'
import { type BrowserSession, openBrowserSession } from '../helpers/ws-client.js'

const h = await startVoiceHarness()
t.teardown(() => h.close())

/** Sets the agent's agent.webhook options (on top of the harness's own). */
async function webhookOptions(extra: Record<string, unknown>): Promise<void> {
  const config = structuredClone(h.agent.config)
  config.plugins = config.plugins.map((p: { use: string; options: Record<string, unknown> }) =>
    p.use === 'agent.webhook' ? { ...p, options: { ...p.options, ...extra } } : p,
  )
  const r = await h.gw.request('POST', `/v1/agents/${h.agent.id}`, { body: { config } })
  if (r.status !== 200) throw new Error(r.text)
}

/** A browser session that plays every reply at once; resolves after the welcome. */
async function session(t: Test): Promise<BrowserSession> {
  const auth = await h.gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: h.agent.id } })
  const b = await openBrowserSession(h.gw.url, auth.body.client_session_key)
  t.teardown(() => b.close())
  b.ws.on('message', (d) => {
    const m = JSON.parse(d.toString())
    if (m.type !== 'response.end') return
    setTimeout(() => b.send({ type: 'trigger.response.audio.replay_finished', reason: 'completed', turn_id: m.turn_id }), 200)
  })
  await b.waitFor((m) => m.type === 'turn.end' && m.role === 'assistant')
  return b
}

/** Says `text` and resolves with the text of the reply (the next response.text), once its turn is over. */
async function ask(b: BrowserSession, text: string): Promise<string> {
  const since = b.received.length
  b.send({ type: 'client.response.text', content: text })
  const reply = await b.waitFor((m) => m.type === 'response.text' && b.messages.indexOf(m) >= since, 10_000)
  await b.waitFor((m) => m.type === 'turn.end' && m.role === 'assistant' && m.turn_id === reply.m.turn_id, 10_000)
  return reply.m.content
}

function sse(turnId: string, text: string) {
  return {
    kind: 'sse' as const,
    steps: [{ data: { type: 'response.tts', content: text, turn_id: turnId } }, { data: { type: 'response.end', turn_id: turnId } }],
  }
}

const HOLD = 'Please hold on while I look that up for you, it will only take a moment.'
const FALLBACK = 'I am sorry, something went wrong on my side, could you please repeat what you just said?'

/** The session details once `ready` holds for them. */
async function eventuallyDetails(sessionId: string, ready: (d: any) => boolean): Promise<any> {
  const deadline = Date.now() + 5_000
  for (;;) {
    const d = (await h.gw.request('GET', `/v1/agents/${h.agent.id}/sessions/${sessionId}`)).body
    if (ready(d) || Date.now() > deadline) return d
    await new Promise((r) => setTimeout(r, 50))
  }
}

const WELCOME = (req: { json: any }) => (req.json.type === 'session.start' ? sse(req.json.turn_id, 'Hello.') : undefined)

t.test('messages in turn; a good turn ends the streak; the third failure in a row says the farewell and hangs up', async (t) => {
  await webhookOptions({
    fallback: {
      messages: ['Sorry, once more?', 'Pardon me?'],
      max_consecutive_failures: 3,
      on_max_failures: 'hangup',
      farewell_message: 'Goodbye for now.',
    },
  })
  h.backend.reply = (req) => WELCOME(req) ?? (req.json.text === 'fine' ? sse(req.json.turn_id, 'Good.') : { kind: 'status', status: 503 })
  const b = await session(t)
  t.equal(await ask(b, 'one'), 'Sorry, once more?')
  t.equal(await ask(b, 'two'), 'Pardon me?')
  t.equal(await ask(b, 'fine'), 'Good.', 'the backend answers: the streak is over')
  t.equal(await ask(b, 'three'), 'Sorry, once more?', 'the messages go on in turn')
  t.equal(await ask(b, 'four'), 'Pardon me?')
  const closed = new Promise<number>((resolve) => b.ws.once('close', (code) => resolve(code)))
  t.equal(await ask(b, 'five'), 'Goodbye for now.', 'the third failure in a row: the farewell')
  t.ok((await closed) > 0, 'then the session ends')
})

t.test('on_max_failures transfer: the transfer message, then a transfer (a browser session cannot: it goes on)', async (t) => {
  await webhookOptions({
    fallback: {
      max_consecutive_failures: 1,
      on_max_failures: 'transfer',
      transfer_to: '+14155550100',
      transfer_message: 'Transferring you.',
    },
  })
  h.backend.reply = (req) => WELCOME(req) ?? { kind: 'status', status: 500 }
  const b = await session(t)
  const before = h.backend.requests.length
  t.equal(await ask(b, 'help'), 'Transferring you.')
  const error = await b.waitFor((m) => m.type === 'error', 5_000)
  t.equal(error.m.code, 'transfer_not_supported', 'the transfer was asked for; a browser session cannot be moved')
  const data = await h.backend.request(before + 1)
  t.same(data.json.data?.transfer_failed?.to, '+14155550100')
})

t.test('holding phrase: said when the backend is slow, and the reply follows it', async (t) => {
  await webhookOptions({ holding: { enabled: true, after_ms: 400, messages: ['One moment please.'] } })
  h.backend.reply = (req) =>
    WELCOME(req) ?? {
      kind: 'sse',
      steps: [{ delayMs: req.json.text === 'slow' ? 1200 : 0 }, ...sse(req.json.turn_id, 'Here it is.').steps],
    }
  const b = await session(t)
  t.equal(await ask(b, 'slow'), 'One moment please. Here it is.', 'the holding phrase, then the reply, in one turn')
  t.equal(await ask(b, 'fast'), 'Here it is.', 'a reply in time gets no holding phrase')
  const holding = b.messages.filter((m) => m.type === 'response.text.delta').map((m) => m.content)
  t.ok(holding.indexOf('One moment please.') < holding.indexOf(' Here it is.'), `in order: ${JSON.stringify(holding)}`)
})

t.test('barge-in during a holding phrase cancels it and the request; during a fallback, it stops the fallback', async (t) => {
  await webhookOptions({
    holding: { enabled: true, after_ms: 300, messages: [HOLD] },
    fallback: { messages: [FALLBACK] },
  })
  h.backend.reply = (req) => {
    const welcome = WELCOME(req)
    if (welcome) return welcome
    if (req.json.text === 'slow') return { kind: 'hang' }
    if (req.json.text === 'broken') return { kind: 'status', status: 500 }
    return sse(req.json.turn_id, 'Sure.')
  }
  const b = await session(t)
  const before = h.backend.requests.length
  b.send({ type: 'client.response.text', content: 'slow' })
  const hold = await b.waitFor((m) => m.type === 'response.text.delta' && m.content.startsWith('Please hold on'), 5_000)
  b.send({ type: 'client.response.text', content: 'never mind' })
  t.equal((await h.backend.request(before)).json.text, 'slow')
  t.equal(await (await h.backend.request(before)).closed, 'aborted', 'the slow request was cancelled')
  // The next turn's reply; on a loaded machine its own holding phrase (300 ms) may come first.
  await b.waitFor((m) => m.type === 'response.text' && m.content.endsWith('Sure.'), 5_000)
  t.notOk(
    b.messages.some((m) => m.type === 'response.text' && m.turn_id === hold.m.turn_id),
    'the held turn never completed (no fallback after the barge-in)',
  )

  const mark = b.received.length
  b.send({ type: 'client.response.text', content: 'broken' })
  await b.waitFor((m) => m.type === 'response.text.delta' && m.content.startsWith('I am sorry'), 5_000)
  b.send({ type: 'client.response.text', content: 'what?' })
  await b.waitFor((m) => m.type === 'response.text' && m.content.endsWith('Sure.') && b.messages.indexOf(m) > mark, 5_000)
  const sessionId = (await h.backend.request(before)).json.session_id
  const details = await eventuallyDetails(sessionId, (d) => d.transcript.some((e: any) => e.user_message === 'what?'))
  const failed = details.transcript.find((e: any) => e.user_message === 'broken')
  t.equal(failed?.failure?.cause, 'http_500', "the interrupted fallback's turn keeps its cause")
  t.not(failed?.assistant_message, FALLBACK, `the fallback was cut off where the caller spoke (${failed?.assistant_message})`)
  const held = details.transcript.find((e: any) => e.user_message === 'slow')
  t.equal(held?.failure, null, 'a barge-in during the wait is not a failure')
  t.not(held?.assistant_message, HOLD, 'the holding phrase was cut off too')
})

t.test('speech synthesis failing for a reply is recorded as tts_failed', async (t) => {
  await webhookOptions({})
  h.backend.reply = (req) =>
    WELCOME(req) ?? {
      kind: 'sse',
      steps: [{ data: { type: 'response.tts', content: 'Your order ships today.', turn_id: req.json.turn_id } }, { delayMs: 600 }],
    }
  const b = await session(t)
  const before = h.backend.requests.length
  b.send({ type: 'client.response.text', content: 'my order?' })
  const delta = await b.waitFor((m) => m.type === 'response.text.delta' && m.content === 'Your order ships today.', 5_000)
  // The vendor refuses the reply's context before it produced any audio (audio comes on flush, after the reply ends).
  h.elevenlabs.connections.at(-1)?.sendError('quota exceeded', 'quota_exceeded', delta.m.turn_id)
  await b.waitFor((m) => m.type === 'turn.end' && m.role === 'assistant' && m.turn_id === delta.m.turn_id, 10_000)
  const sessionId = (await h.backend.request(before)).json.session_id
  const details = await eventuallyDetails(sessionId, (d) => d.transcript.some((e: any) => e.user_message === 'my order?'))
  const failed = details.transcript.find((e: any) => e.user_message === 'my order?')
  t.match(failed?.failure, { cause: 'tts_failed', heard: null, detail: /quota exceeded/ })
})
