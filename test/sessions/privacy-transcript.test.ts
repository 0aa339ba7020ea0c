import t from 'tap'
import { startTestGateway } from '../helpers/gateway.js'
import { startWebhookReceiver } from '../helpers/webhook-receiver.js'
import { MemoryTransport } from '../helpers/memory-transport.js'
import { withoutWelcome } from '../helpers/quiet-agent.js'

const receiver = await startWebhookReceiver()
t.teardown(() => receiver.close())
const gw = await startTestGateway()
t.teardown(() => gw.close())

/** An agent with a lifecycle webhook and `privacy`; it does not speak first, so transcripts hold only what a test adds. */
async function newAgent(privacy?: Record<string, unknown>) {
  const a = (await gw.request('POST', '/v1/agents', { body: {} })).body
  const config = withoutWelcome({
    ...a.config,
    session_webhook: { url: `${receiver.url}/lifecycle`, events: ['session.end'] },
    ...(privacy === undefined ? {} : { privacy }),
  })
  const r = await gw.request('POST', `/v1/agents/${a.id}`, { body: { config } })
  if (r.status !== 200) throw new Error(r.text)
  return r.body
}

async function open(agentId: string) {
  const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agentId } })
  if (auth.status !== 200) throw new Error(auth.text)
  const r = await gw.gateway.sessions.open(auth.body.client_session_key, new MemoryTransport(), { ipAddress: null, countryCode: null })
  if (!r.ok) throw new Error(`open failed: ${r.reason}`)
  return r.session
}

function turn(id: string, userMessage: string | null, assistantMessage: string | null) {
  return { turnId: id, timestamp: new Date(), userMessage, assistantMessage, latencyMs: 100 }
}

const CARD_DIGITS = /4111|1111/

/** What the session details and the session.end webhook hold of a finished session's transcript. */
async function stored(agentId: string, sessionId: string) {
  const end = await receiver.waitFor((r) => r.json?.type === 'session.end' && r.json.session_id === sessionId)
  const details = await gw.request('GET', `/v1/agents/${agentId}/sessions/${sessionId}`)
  return {
    details: details.body.transcript.map((x: { user_message: string | null; assistant_message: string | null }) => [
      x.user_message,
      x.assistant_message,
    ]),
    webhook: end.json.transcript.map((x: { role: string; text: string }) => [x.role, x.text]),
    raw: JSON.stringify([details.body, end.json]),
  }
}

t.test('by default a card said across two turns is stored as markers, in details and in session.end', async (t) => {
  const agent = await newAgent()
  const session = await open(agent.id)
  session.addTurn(turn('u1', 'my card is 4111 1111', 'go on'))
  session.addTurn(turn('u2', '1111 1111 and that is it', 'thanks, your card 4111 1111 1111 1111 is noted'))
  session.addTurn(turn('u3', 'my social is 123-45-6789', null))
  await session.end('hangup')
  const s = await stored(agent.id, session.id)
  t.strictSame(s.details, [
    ['my card is [card]', 'go on'],
    ['[card] and that is it', 'thanks, your card [card] is noted'],
    ['my social is [ssn]', null],
  ])
  t.strictSame(s.webhook, [
    ['user', 'my card is [card]'],
    ['assistant', 'go on'],
    ['user', '[card] and that is it'],
    ['assistant', 'thanks, your card [card] is noted'],
    ['user', 'my social is [ssn]'],
  ])
  t.notMatch(s.raw, CARD_DIGITS, 'no digit of the card anywhere')
  t.notMatch(s.raw, /6789/, 'nor of the SSN')
})

t.test('a number held at the end of the last turn is stored at the session end', async (t) => {
  const agent = await newAgent()
  const session = await open(agent.id)
  session.addTurn(turn('u1', 'it is 4111 1111 1111 1111', null))
  await session.end('hangup')
  const s = await stored(agent.id, session.id)
  t.strictSame(s.details, [['it is [card]', null]])
})

t.test('transcripts: full stores the text as said', async (t) => {
  const agent = await newAgent({ transcripts: 'full' })
  const session = await open(agent.id)
  session.addTurn(turn('u1', 'card 4111 1111 1111 1111 ok', 'ok'))
  await session.end('hangup')
  const s = await stored(agent.id, session.id)
  t.strictSame(s.details, [['card 4111 1111 1111 1111 ok', 'ok']])
})

t.test('transcripts: none stores no text, the turns stay (latency)', async (t) => {
  const agent = await newAgent({ transcripts: 'none' })
  const session = await open(agent.id)
  session.addTurn(turn('u1', 'hello there', 'hi'))
  await session.end('hangup')
  const s = await stored(agent.id, session.id)
  t.strictSame(s.details, [[null, null]])
  t.strictSame(s.webhook, [], 'session.end carries no text')
  const details = await gw.request('GET', `/v1/agents/${agent.id}/sessions/${session.id}`)
  t.equal(details.body.transcript[0].latency_ms, 100)
})
