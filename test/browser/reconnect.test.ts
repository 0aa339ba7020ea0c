import t from 'tap'
import { startTestGateway } from '../helpers/gateway.js'
import { closed, openBrowserSession } from '../helpers/ws-client.js'
import { startFakeOpenAi } from '../fakes/openai/fake-openai.js'

// A reconnecting browser continues its conversation in a fresh session, and the agent step gets the history of
// the earlier session. The OpenAI-compatible step shows it: history is in the messages it sends the model.
const llm = await startFakeOpenAi({ apiKey: 'llm-key' })
t.teardown(() => llm.close())
const gw = await startTestGateway({ LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: 'llm-key' })
t.teardown(() => gw.close())
const agent = (await gw.request('POST', '/v1/agents', { body: { template_id: 'voice-agent-openai' } })).body

/** A browser-like client that reports audio as played once the assistant's turn is over, as the SDK does. */
const client = (key: string) => openBrowserSession(gw.url, key, { acknowledgePlayback: true })

t.test('drop, re-authorize with conversation_id, continue with history', async (t) => {
  const auth1 = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agent.id } })
  const c1 = await client(auth1.body.client_session_key)
  const { m: welcome } = await c1.waitFor((m) => m.type === 'turn.end' && m.role === 'assistant')
  c1.ws.send(JSON.stringify({ type: 'client.response.text', content: 'my name is Ada' }))
  await c1.waitFor((m) => m.type === 'turn.end' && m.role === 'assistant' && m.turn_id !== welcome.turn_id)
  // The turn is stored once the reply was heard; give the write a moment, then drop without a close frame.
  const deadline = Date.now() + 5_000
  while (Date.now() < deadline) {
    const rows = await gw.store.db
      .selectFrom('transcript_entries')
      .selectAll()
      .where('conversation_id', '=', auth1.body.conversation_id)
      .execute()
    if (rows.some((r) => r.user_message === 'my name is Ada')) break
    await new Promise((r) => setTimeout(r, 50))
  }
  const gone = closed(c1.ws)
  c1.ws.terminate()
  await gone

  const auth2 = await gw.request('POST', '/v1/agents/web/authorize_session', {
    body: { agent_id: agent.id, conversation_id: auth1.body.conversation_id },
  })
  t.equal(auth2.body.conversation_id, auth1.body.conversation_id)
  const c2 = await client(auth2.body.client_session_key)
  await c2.waitFor((m) => m.type === 'turn.end' && m.role === 'assistant')
  const before = llm.requests.length
  c2.ws.send(JSON.stringify({ type: 'client.response.text', content: 'what is my name' }))
  await c2.waitFor((m) => m.type === 'response.text' && llm.requests.length > before)
  const last = llm.requests.at(-1)!.json.messages as { role: string; content: string }[]
  const users = last.filter((m) => m.role === 'user').map((m) => m.content)
  t.ok(users.includes('my name is Ada'), 'the earlier session is in the history')
  t.equal(users.at(-1), 'what is my name')
  t.ok(
    last.some((m) => m.role === 'assistant'),
    'assistant replies too',
  )
  const sessions = await gw.store.db
    .selectFrom('sessions')
    .select(['id', 'conversation_id', 'ended_at'])
    .where('conversation_id', '=', auth1.body.conversation_id)
    .execute()
  t.equal(sessions.length, 2, 'two sessions, one conversation')
  const c = closed(c2.ws)
  c2.ws.close()
  await c
})
