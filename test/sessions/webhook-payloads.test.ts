import t from 'tap'
import { openBrowserSession } from '../helpers/ws-client.js'
import { startTestGateway } from '../helpers/gateway.js'
import { startWebhookReceiver } from '../helpers/webhook-receiver.js'
import { startFakeBackend, type BackendRequest } from '../fakes/backend/fake-backend.js'

// What every webhook carries, end to end: a browser on a real socket, the agent webhook on a fake backend and
// the lifecycle webhook on a receiver, both real HTTP. `session_webhook.custom_metadata` and `custom_headers`
// reach every webhook (SPEC); the authorization metadata travels as `metadata`.
const receiver = await startWebhookReceiver()
t.teardown(() => receiver.close())
const gw = await startTestGateway()
t.teardown(() => gw.close())
const created = (await gw.request('POST', '/v1/agents', { body: { template_id: 'voice-agent-webhook' } })).body
const backend = await startFakeBackend({ secret: created.webhook_secret })
t.teardown(() => backend.close())

// Browser only and text only (no STT or TTS vendor): the webhooks are the subject, not speech.
const config = {
  ...created.config,
  clients: { browser: true, carrier: false },
  plugins: [
    { use: 'turn_manager', options: { mode: 'automatic' } },
    { use: 'agent.webhook', options: { url: backend.url, custom_headers: { 'X-Agent-Key': 'agent-only' } } },
  ],
  session_webhook: {
    url: `${receiver.url}/lifecycle`,
    custom_headers: { 'X-Tenant': 'acme' },
    custom_metadata: { region: 'eu' },
  },
}
const updated = await gw.request('POST', `/v1/agents/${created.id}`, { body: { config } })
if (updated.status !== 200) throw new Error(updated.text)
const agent = updated.body

/** A browser client on the real WebSocket that records every message. */
const browser = (key: string) => openBrowserSession(gw.url, key)

async function agentRequest(pred: (r: BackendRequest) => boolean, timeoutMs = 10_000): Promise<BackendRequest> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = backend.requests.find(pred)
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error('timed out waiting for an agent webhook request')
    await new Promise((r) => setTimeout(r, 20))
  }
}

t.test('session_webhook custom_metadata and custom_headers reach agent webhooks; metadata stays metadata', async (t) => {
  const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agent.id, metadata: { ticket: 'T-1' } } })
  t.equal(auth.status, 200, auth.text)
  const conversation = auth.body.conversation_id
  const client = await browser(auth.body.client_session_key)
  const start = await agentRequest((r) => r.json?.type === 'session.start' && r.json.conversation_id === conversation)
  await client.waitFor((m) => m.type === 'response.text' && m.turn_id === start.json.turn_id)
  client.ws.send(JSON.stringify({ type: 'client.response.text', content: 'hello there' }))
  const message = await agentRequest((r) => r.json?.type === 'message' && r.json.conversation_id === conversation)
  client.ws.send(JSON.stringify({ type: 'client.response.data', data: { button: 'yes' } }))
  const data = await agentRequest((r) => r.json?.type === 'data' && r.json.conversation_id === conversation)
  for (const r of [start, message, data]) {
    const type = r.json.type
    t.ok(r.signatureValid, `${type}: signed`)
    t.same(r.json.custom_metadata, { region: 'eu' }, `${type}: custom_metadata is session_webhook.custom_metadata`)
    t.same(r.json.metadata, { ticket: 'T-1' }, `${type}: the authorization metadata is metadata`)
    t.equal(r.headers['x-tenant'], 'acme', `${type}: session_webhook.custom_headers sent`)
    t.equal(r.headers['x-agent-key'], 'agent-only', `${type}: the agent webhook's own headers too`)
  }
  const lifecycleStart = await receiver.waitFor((r) => r.json?.type === 'session.start' && r.json.conversation_id === conversation)
  t.same(lifecycleStart.json.custom_metadata, { region: 'eu' })
  t.same(lifecycleStart.json.metadata, { ticket: 'T-1' })
  t.equal(lifecycleStart.headers['x-tenant'], 'acme')
  t.equal(lifecycleStart.headers['x-agent-key'], undefined, "the agent webhook's headers stay on agent requests")
  client.ws.close()
})

t.test('session.start: the welcome turn_id on both webhooks; the agent one carries agent_id, started_at, metadata', async (t) => {
  backend.reply = (req) => ({
    kind: 'sse',
    steps: [
      { data: { type: 'response.tts', content: 'welcome', turn_id: req.json?.turn_id } },
      { data: { type: 'response.end', turn_id: req.json?.turn_id } },
    ],
  })
  const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agent.id } })
  const conversation = auth.body.conversation_id
  const client = await browser(auth.body.client_session_key)
  const { m: welcome } = await client.waitFor((m) => m.type === 'turn.start' && m.role === 'assistant')
  const agentStart = await agentRequest((r) => r.json?.type === 'session.start' && r.json.conversation_id === conversation)
  const lifecycleStart = await receiver.waitFor((r) => r.json?.type === 'session.start' && r.json.conversation_id === conversation)
  t.match(welcome.turn_id, /^assistant-/)
  t.equal(agentStart.json.turn_id, welcome.turn_id, 'agent webhook: the welcome turn')
  t.equal(lifecycleStart.json.turn_id, welcome.turn_id, 'lifecycle webhook: the same welcome turn')
  t.equal(agentStart.json.session_id, lifecycleStart.json.session_id)
  t.equal(agentStart.json.agent_id, agent.id)
  t.equal(agentStart.json.started_at, lifecycleStart.json.started_at)
  t.ok(Number.isFinite(Date.parse(agentStart.json.started_at)), 'started_at is an ISO timestamp')
  t.same(agentStart.json.metadata, {}, 'metadata is an object even when none was given')
  t.same(lifecycleStart.json.metadata, {})
  client.ws.close()
})
