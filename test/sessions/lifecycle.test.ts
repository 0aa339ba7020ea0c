import t from 'tap'
import { createHmac } from 'node:crypto'
import { startTestGateway } from '../helpers/gateway.js'
import { startWebhookReceiver, type ReceivedRequest } from '../helpers/webhook-receiver.js'
import { MemoryTransport } from '../helpers/memory-transport.js'
import { connectBrowser, closed } from '../helpers/ws-client.js'
import { withoutWelcome } from '../helpers/quiet-agent.js'

const receiver = await startWebhookReceiver()
t.teardown(() => receiver.close())
// One "minute" is 200 ms here, so the SPEC's minute-based timeouts can be tested.
const MINUTE = 200
const gw = await startTestGateway({ USAGE_RATE_PER_MINUTE: '0.5' }, { deps: { sessionOverrides: { minuteMs: MINUTE } } })
t.teardown(() => gw.close())

function hookConfig(extra: Record<string, unknown> = {}) {
  return {
    session_webhook: {
      url: `${receiver.url}/lifecycle`,
      custom_headers: { 'X-Tenant': 'acme' },
      custom_metadata: { region: 'eu' },
      ...extra,
    },
  }
}

/** An agent with `config` merged in; it does not speak first, so transcripts hold only what a test adds. */
async function newAgent(config: Record<string, unknown> = {}) {
  const a = (await gw.request('POST', '/v1/agents', { body: {} })).body
  const merged = withoutWelcome({ ...a.config, ...config })
  const r = await gw.request('POST', `/v1/agents/${a.id}`, { body: { config: merged } })
  if (r.status !== 200) throw new Error(r.text)
  return r.body
}

async function open(agentId: string, body: Record<string, unknown> = {}) {
  const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agentId, ...body } })
  if (auth.status !== 200) throw new Error(auth.text)
  const transport = new MemoryTransport()
  const r = await gw.gateway.sessions.open(auth.body.client_session_key, transport, { ipAddress: '203.0.113.7', countryCode: null })
  if (!r.ok) throw new Error(`open failed: ${r.reason}`)
  return { session: r.session, transport, auth: auth.body }
}

/** Independent check of the SPEC's signature: HMAC-SHA256 over "<t>.<raw body>" with the webhook secret. */
function verify(req: ReceivedRequest, secret: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(req.headers['service-signature']))
  if (!m) return false
  const expected = createHmac('sha256', secret).update(`${m[1]}.${req.raw}`).digest('hex')
  return expected === m[2] && Math.abs(Date.now() / 1000 - Number(m[1])) < 300
}

t.test('session.start and session.end are signed, carry custom headers and metadata, in order', async (t) => {
  const agent = await newAgent(hookConfig())
  const { session } = await open(agent.id, { metadata: { ticket: 'T-1' } })
  await session.addTurn({ turnId: 'u1', timestamp: new Date(), userMessage: 'hello', assistantMessage: 'hi there', latencyMs: 120 })
  await session.addTurn({ turnId: 'u2', timestamp: new Date(), userMessage: 'bye', assistantMessage: null, latencyMs: 80 })
  session.usage.transcriptionSeconds = 2.5
  session.usage.ttsSeconds = 1.25
  await session.end('hangup')
  const start = await receiver.waitFor((r) => r.json?.type === 'session.start' && r.json.session_id === session.id)
  const end = await receiver.waitFor((r) => r.json?.type === 'session.end' && r.json.session_id === session.id)
  t.ok(start.at <= end.at, 'start delivered before end')
  for (const r of [start, end]) {
    t.ok(verify(r, agent.webhook_secret), `${r.json.type} signature verifies independently`)
    t.notOk(verify(r, 'whsec_wrong'), 'and not with another secret')
    t.equal(r.headers['x-tenant'], 'acme')
    t.equal(r.headers['content-type'], 'application/json')
    t.same(r.json.custom_metadata, { region: 'eu' })
    t.equal(r.json.conversation_id, session.conversationId)
    t.equal(r.path, '/lifecycle')
  }
  const e = end.json
  t.equal(e.agent_id, agent.id)
  t.ok(Date.parse(e.started_at) <= Date.parse(e.ended_at))
  t.type(e.duration, 'number')
  t.equal(e.transcription_duration_seconds, 2.5)
  t.equal(e.tts_duration_seconds, 1.25)
  t.equal(e.latency, 100, 'mean turn latency')
  t.equal(e.ip_address, '203.0.113.7')
  t.equal(e.country_code, null)
  t.equal(e.recording_status, 'disabled')
  t.equal(e.end_reason, 'hangup')
  t.same(e.metadata, { ticket: 'T-1' })
  t.same(
    e.transcript.map((x: { role: string; text: string }) => [x.role, x.text]),
    [
      ['user', 'hello'],
      ['assistant', 'hi there'],
      ['user', 'bye'],
    ],
  )
  t.type(e.transcript[0].timestamp, 'number')
  const details = await gw.request('GET', `/v1/agents/${agent.id}/sessions/${session.id}`)
  t.equal(details.body.transcript.length, 2)
  t.same(details.body.transcript[0].user_message, 'hello')
  t.same(details.body.transcript[0].assistant_message, 'hi there')
  t.equal(details.body.transcript[0].latency_ms, 120)
  t.equal(details.body.latency_ms, 100)
  t.equal(details.body.transcription_duration_seconds, 2.5)
})

t.test('only the configured events are sent', async (t) => {
  const agent = await newAgent(hookConfig({ events: ['session.end'] }))
  const { session } = await open(agent.id)
  await session.end('hangup')
  await receiver.waitFor((r) => r.json?.type === 'session.end' && r.json.session_id === session.id)
  t.notOk(receiver.requests.some((r) => r.json?.type === 'session.start' && r.json.session_id === session.id))
})

t.test('delivery retries 5xx and network errors with backoff, keeps order, never breaks the call', async (t) => {
  const agent = await newAgent(hookConfig())
  let failures = 2
  const prev = receiver.respond
  receiver.respond = (req, res) => {
    if (req.json?.type === 'session.start' && failures-- > 0) {
      res.writeHead(503)
      res.end()
      return
    }
    prev(req, res)
  }
  t.teardown(() => {
    receiver.respond = prev
  })
  const { session } = await open(agent.id)
  await session.end('hangup')
  await receiver.waitFor((r) => r.json?.type === 'session.end' && r.json.session_id === session.id)
  const mine = receiver.requests.filter((r) => r.json?.session_id === session.id).map((r) => r.json.type)
  t.same(mine, ['session.start', 'session.start', 'session.start', 'session.end'], 'two retries, then end after start')
  await session.drainWebhooks(5_000)
  t.same(
    session.webhookResults.map((r) => [r.type, r.ok, r.attempts]),
    [
      ['session.start', true, 3],
      ['session.end', true, 1],
    ],
  )
})

t.test('a 4xx is final and an unreachable endpoint gives up after bounded attempts', async (t) => {
  const prev = receiver.respond
  receiver.respond = (_req, res) => {
    res.writeHead(400)
    res.end()
  }
  t.teardown(() => {
    receiver.respond = prev
  })
  const agent = await newAgent(hookConfig({ events: ['session.start'] }))
  const { session } = await open(agent.id)
  await session.drainWebhooks(5_000)
  t.same(
    session.webhookResults.map((r) => [r.ok, r.attempts, r.status]),
    [[false, 1, 400]],
  )
  await session.end('hangup')

  const dead = await newAgent({ session_webhook: { url: 'http://127.0.0.1:9/unreachable', events: ['session.start'] } })
  const s2 = (await open(dead.id)).session
  await s2.drainWebhooks(5_000)
  t.same(
    s2.webhookResults.map((r) => [r.ok, r.attempts, r.error]),
    // A loopback target is private: whatever failed, the record says only that the connection did.
    [[false, 4, 'connection failed']],
  )
  await s2.end('hangup')
  t.equal((await gw.request('GET', `/v1/agents/${dead.id}/sessions/${s2.id}`)).body.status, 'ended', 'the call ended normally')
})

t.test('session_duration_timeout_minutes ends the session', async (t) => {
  const agent = await newAgent({ session_duration_timeout_minutes: 1 })
  const started = Date.now()
  const { session, transport } = await open(agent.id)
  t.equal(await session.ended, 'duration_timeout')
  const took = Date.now() - started
  t.ok(took >= MINUTE - 20 && took < MINUTE * 10, `ended after ~1 minute (${took} ms at ${MINUTE} ms/min)`)
  t.same(transport.closes, ['duration_timeout'], 'the transport was told once')
  const d = await gw.request('GET', `/v1/agents/${agent.id}/sessions/${session.id}`)
  t.equal(d.body.end_reason, 'duration_timeout')
})

t.test('user_silence_timeout_minutes ends the session; user activity restarts it', async (t) => {
  const a = await newAgent()
  const cfg = structuredClone(a.config)
  cfg.plugins.find((p: { use: string }) => p.use === 'turn_manager').options.user_silence_timeout_minutes = 2
  const agent = (await gw.request('POST', `/v1/agents/${a.id}`, { body: { config: cfg } })).body
  const { session } = await open(agent.id)
  const started = Date.now()
  // Activity at 1.5 "minutes" pushes the end to 3.5.
  await new Promise((r) => setTimeout(r, MINUTE * 1.5))
  session.noteUserActivity()
  t.equal(await session.ended, 'silence_timeout')
  const took = Date.now() - started
  t.ok(took >= MINUTE * 3.4, `activity restarted the timer (${took} ms)`)
})

t.test('end is idempotent and the transport closing ends the session once', async (t) => {
  const agent = await newAgent(hookConfig({ events: ['session.end'] }))
  const { session, transport } = await open(agent.id)
  await Promise.all([session.end('hangup'), session.end('error'), session.transportClosed()])
  t.same(transport.closes, ['hangup'])
  await session.drainWebhooks(5_000)
  t.equal(receiver.requests.filter((r) => r.json?.type === 'session.end' && r.json.session_id === session.id).length, 1)
  t.ok(session.signal.aborted, 'the session signal is aborted')
})

t.test('usage is charged from the balance at session end', async (t) => {
  const org = (await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'Billed', balance: 10 } })).body
  const agent = (await gw.request('POST', '/v1/agents', { key: org.api_key, body: {} })).body
  const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { key: org.api_key, body: { agent_id: agent.id } })
  const r = await gw.gateway.sessions.open(auth.body.client_session_key, new MemoryTransport(), { ipAddress: null, countryCode: null })
  t.ok(r.ok)
  if (!r.ok) return
  await gw.store.db
    .updateTable('sessions')
    .set({ started_at: new Date(Date.now() - 120_000) })
    .where('id', '=', r.session.id)
    .execute()
  await r.session.end('hangup')
  const after = (await gw.request('GET', `/admin/v1/organizations/${org.id}`, { admin: true })).body
  // Two minutes at 0.5 per minute.
  t.ok(Math.abs(after.balance - 9) < 0.01, `balance 10 -> ${after.balance}`)
})

t.test('shutdown ends live sessions, sends session.end and refuses new ones', async (t) => {
  const local = await startTestGateway({}, { deps: { sessionOverrides: { minuteMs: MINUTE } } })
  const a = (await local.request('POST', '/v1/agents', { body: {} })).body
  const agent = (
    await local.request('POST', `/v1/agents/${a.id}`, { body: { config: { ...a.config, ...hookConfig({ events: ['session.end'] }) } } })
  ).body
  const auth1 = await local.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agent.id } })
  const auth2 = await local.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agent.id } })
  const conn = await connectBrowser(local.url, auth1.body.client_session_key)
  t.ok(conn.ok)
  if (!conn.ok) return
  const wsClosed = closed(conn.ws)
  const row = await local.store.db
    .selectFrom('sessions')
    .select('id')
    .where('conversation_id', '=', auth1.body.conversation_id)
    .executeTakeFirstOrThrow()
  const closing = local.gateway.close()
  t.equal((await wsClosed).code, 1001, 'socket closed with going-away')
  await closing
  const ended = await local.store.db.selectFrom('sessions').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow()
  t.equal(ended.status, 'ended')
  t.equal(ended.end_reason, 'shutdown')
  t.ok(
    receiver.requests.some((r) => r.json?.type === 'session.end' && r.json.session_id === row.id),
    'session.end delivered before exit',
  )
  const late = await local.gateway.sessions.open(auth2.body.client_session_key, new MemoryTransport(), {
    ipAddress: null,
    countryCode: null,
  })
  t.same(late, { ok: false, reason: 'shutting_down' })
  await local.db.cleanup()
})
