import t from 'tap'
import { startTestGateway } from '../helpers/gateway.js'
import { connectBrowser, closed } from '../helpers/ws-client.js'
import { withoutWelcome } from '../helpers/quiet-agent.js'

const gw = await startTestGateway()
t.teardown(() => gw.close())

const created = (await gw.request('POST', '/v1/agents', { body: { name: 'Sessions' } })).body
// These tests are about sessions, not conversation: the agent does not speak first.
const agent = (await gw.request('POST', `/v1/agents/${created.id}`, { body: { config: withoutWelcome(created.config) } })).body
const other = (await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'Other' } })).body
const otherAgent = (await gw.request('POST', '/v1/agents', { key: other.api_key, body: {} })).body

async function authorize(body: Record<string, unknown>, key?: string) {
  return gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agent.id, ...body }, key })
}

t.test('new conversation: key, conversation id and frontend config', async (t) => {
  const r = await authorize({})
  t.equal(r.status, 200)
  t.match(r.body.client_session_key, /^csk_[A-Za-z0-9_-]{43}$/, '256 random bits')
  t.match(r.body.conversation_id, /^conv_/)
  t.same(r.body.config.transcription, { trigger: 'automatic', can_interrupt: true, automatic: true })
  t.equal(r.body.config.vad.enabled, true)
  t.equal(r.body.config.vad.buffer_frames, 10)
  t.equal(r.body.config.vad.frame_samples, 512)
  const nullConv = await authorize({ conversation_id: null })
  t.equal(nullConv.status, 200)
  t.not(nullConv.body.conversation_id, r.body.conversation_id, 'null starts a fresh conversation')
})

t.test('keys are stored hashed', async (t) => {
  const r = await authorize({})
  const rows = await gw.store.db.selectFrom('sessions').selectAll().execute()
  t.notOk(JSON.stringify(rows).includes(r.body.client_session_key))
})

t.test('resume: same conversation, new session; foreign or unknown conversation is 400', async (t) => {
  const first = await authorize({})
  const resumed = await authorize({ conversation_id: first.body.conversation_id })
  t.equal(resumed.status, 200)
  t.equal(resumed.body.conversation_id, first.body.conversation_id)
  t.not(resumed.body.client_session_key, first.body.client_session_key)
  const unknown = await authorize({ conversation_id: 'conv_nope' })
  t.equal(unknown.status, 400)
  t.match(unknown.body.error, /invalid conversation id/)
  const foreignConv = await gw.request('POST', '/v1/agents/web/authorize_session', {
    key: other.api_key,
    body: { agent_id: otherAgent.id },
  })
  const foreign = await authorize({ conversation_id: foreignConv.body.conversation_id })
  t.equal(foreign.status, 400)
  t.match(foreign.body.error, /invalid conversation id/)
  // A conversation of another agent of the same organization does not resume either.
  const second = (await gw.request('POST', '/v1/agents', { body: {} })).body
  const crossAgent = await gw.request('POST', '/v1/agents/web/authorize_session', {
    body: { agent_id: second.id, conversation_id: first.body.conversation_id },
  })
  t.equal(crossAgent.status, 400)
})

t.test('bad requests: token, agent id, body', async (t) => {
  t.equal((await authorize({}, 'vgk_bad')).status, 400)
  const noKey = await gw.request('POST', '/v1/agents/web/authorize_session', { key: null, body: { agent_id: agent.id } })
  t.equal(noKey.status, 400)
  t.match(noKey.body.error, /bearer/)
  const missing = await gw.request('POST', '/v1/agents/web/authorize_session', { body: {} })
  t.equal(missing.status, 400)
  t.match(missing.body.error, /agent_id is required/)
  const bad = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: 'agt_nope' } })
  t.equal(bad.status, 400)
  t.match(bad.body.error, /invalid agent id/)
  const foreignAgent = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: otherAgent.id } })
  t.equal(foreignAgent.status, 400)
  t.match(foreignAgent.body.error, /invalid agent id/)
  const badOverride = await authorize({ config: { session_duration_timeout_minutes: 0 } })
  t.equal(badOverride.status, 400)
  t.match(badOverride.body.error, /session_duration_timeout_minutes must be between 1 and 1440/)
  const typo = await authorize({ config: { vda: {} } })
  t.equal(typo.status, 400)
  t.match(typo.body.error, /vda is not a known field/)
  const big = await authorize({ metadata: { blob: 'x'.repeat(20_000) } })
  t.equal(big.status, 400)
  t.match(big.body.error, /metadata must be at most/)
})

t.test('402 when the balance is zero or below; unlimited when null', async (t) => {
  const poor = (await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'Poor', balance: 0 } })).body
  const poorAgent = (await gw.request('POST', '/v1/agents', { key: poor.api_key, body: {} })).body
  const r = await gw.request('POST', '/v1/agents/web/authorize_session', { key: poor.api_key, body: { agent_id: poorAgent.id } })
  t.equal(r.status, 402)
  t.equal(r.body.error, 'insufficient balance')
  await gw.request('PATCH', `/admin/v1/organizations/${poor.id}`, { admin: true, body: { balance: -3 } })
  t.equal(
    (await gw.request('POST', '/v1/agents/web/authorize_session', { key: poor.api_key, body: { agent_id: poorAgent.id } })).status,
    402,
  )
  await gw.request('PATCH', `/admin/v1/organizations/${poor.id}`, { admin: true, body: { balance: 1 } })
  t.equal(
    (await gw.request('POST', '/v1/agents/web/authorize_session', { key: poor.api_key, body: { agent_id: poorAgent.id } })).status,
    200,
  )
  await gw.request('PATCH', `/admin/v1/organizations/${poor.id}`, { admin: true, body: { balance: null } })
  t.equal(
    (await gw.request('POST', '/v1/agents/web/authorize_session', { key: poor.api_key, body: { agent_id: poorAgent.id } })).status,
    200,
  )
})

t.test('key lifecycle on the WebSocket: one use, expiry, revocation, unknown', async (t) => {
  const missing = await connectBrowser(gw.url, undefined)
  t.same(missing.ok ? 0 : missing.status, 400)

  const unknown = await connectBrowser(gw.url, 'csk_unknown')
  t.equal(unknown.ok, false)
  if (!unknown.ok) {
    t.equal(unknown.status, 401)
    t.match(unknown.body.error, /unknown client_session_key/)
  }

  const a = await authorize({})
  const first = await connectBrowser(gw.url, a.body.client_session_key)
  t.ok(first.ok, 'a fresh key connects')
  const reuse = await connectBrowser(gw.url, a.body.client_session_key)
  t.equal(reuse.ok, false, 'a key works for one WebSocket only')
  if (!reuse.ok) t.equal(reuse.status, 401)
  if (first.ok) {
    const c = closed(first.ws)
    first.ws.close()
    await c
  }

  const b = await authorize({})
  const newer = await authorize({ conversation_id: b.body.conversation_id })
  const revoked = await connectBrowser(gw.url, b.body.client_session_key)
  t.equal(revoked.ok, false, 'a newer authorization revokes the older key')
  if (!revoked.ok) t.match(revoked.body.error, /already used or replaced/)
  const current = await connectBrowser(gw.url, newer.body.client_session_key)
  t.ok(current.ok, 'the newest key works')
  if (current.ok) current.ws.close()

  const c = await authorize({})
  await gw.store.db
    .updateTable('sessions')
    .set({ key_expires_at: new Date(Date.now() - 1000) })
    .where('conversation_id', '=', c.body.conversation_id)
    .execute()
  const expired = await connectBrowser(gw.url, c.body.client_session_key)
  t.equal(expired.ok, false)
  if (!expired.ok) {
    t.equal(expired.status, 401)
    t.match(expired.body.error, /expired/)
  }
  // The expiry is one hour from authorization.
  const d = await authorize({})
  const row = await gw.store.db
    .selectFrom('sessions')
    .select(['key_expires_at', 'created_at'])
    .where('conversation_id', '=', d.body.conversation_id)
    .executeTakeFirstOrThrow()
  const ttl = row.key_expires_at!.getTime() - row.created_at.getTime()
  t.ok(Math.abs(ttl - 3_600_000) < 5_000, `key valid for one hour (${ttl} ms)`)
})

t.test('session details: fields, connected then ended, scoping', async (t) => {
  const a = await authorize({ metadata: { customer: 'c-42' } })
  const conn = await connectBrowser(gw.url, a.body.client_session_key)
  t.ok(conn.ok)
  const row = await gw.store.db
    .selectFrom('sessions')
    .selectAll()
    .where('conversation_id', '=', a.body.conversation_id)
    .executeTakeFirstOrThrow()
  const live = await gw.request('GET', `/v1/agents/${agent.id}/sessions/${row.id}`)
  t.equal(live.status, 200)
  t.equal(live.body.status, 'connected')
  t.equal(live.body.session_id, row.id)
  t.equal(live.body.agent_id, agent.id)
  t.equal(live.body.ip_address, '127.0.0.1')
  t.same(live.body.metadata, { customer: 'c-42' })
  t.equal(live.body.ended_at, null)
  t.equal(live.body.recording_status, 'not_available')
  for (const f of [
    'started_at',
    'ended_at',
    'duration_ms',
    'from_phone_number',
    'from_phone_country',
    'to_phone_number',
    'to_phone_country',
    'country_code',
    'transcription_duration_seconds',
    'tts_duration_seconds',
    'latency_ms',
    'transcript',
  ]) {
    t.ok(f in live.body, `has ${f}`)
  }
  if (conn.ok) {
    const c = closed(conn.ws)
    conn.ws.close()
    await c
  }
  await gw.gateway.sessions.live.get(row.id)?.ended
  const ended = await gw.request('GET', `/v1/agents/${agent.id}/sessions/${row.id}`)
  t.equal(ended.body.status, 'ended')
  t.equal(ended.body.end_reason, 'client_disconnected')
  t.ok(Date.parse(ended.body.ended_at) >= Date.parse(ended.body.started_at))
  t.type(ended.body.duration_ms, 'number')
  t.same(ended.body.transcript, [])
  t.equal((await gw.request('GET', `/v1/agents/${agent.id}/sessions/sess_nope`)).status, 404)
  t.equal((await gw.request('GET', `/v1/agents/${agent.id}/sessions/${row.id}`, { key: other.api_key })).status, 404)
  t.equal((await gw.request('GET', `/v1/agents/${otherAgent.id}/sessions/${row.id}`)).status, 404, 'wrong agent in path')
})

t.test('override precedence: the session runs with the override, the agent keeps its config', async (t) => {
  const a = await authorize({
    config: { vad: { positive_speech_threshold: 0.8, redemption_frames: 3 }, plugins: undefined, session_duration_timeout_minutes: 2 },
  })
  t.equal(a.status, 200)
  t.equal(a.body.config.vad.positive_speech_threshold, 0.8)
  t.equal(a.body.config.vad.redemption_frames, 3)
  const conn = await connectBrowser(gw.url, a.body.client_session_key)
  t.ok(conn.ok)
  const row = await gw.store.db
    .selectFrom('sessions')
    .selectAll()
    .where('conversation_id', '=', a.body.conversation_id)
    .executeTakeFirstOrThrow()
  const live = gw.gateway.sessions.live.get(row.id)
  t.ok(live)
  t.equal(live?.config.session_duration_timeout_minutes, 2, 'override wins')
  t.equal(live?.config.vad.positive_speech_threshold, 0.8)
  t.equal(live?.config.vad.buffer_frames, 10, 'untouched fields come from the agent')
  const stored = (await gw.request('GET', `/v1/agents/${agent.id}`)).body
  t.equal(stored.config.session_duration_timeout_minutes, 30, 'agent config unchanged')
  if (conn.ok) conn.ws.close()
})

t.test('push-to-talk override shows in the frontend config', async (t) => {
  const cfg = structuredClone(agent.config)
  cfg.clients = { browser: { enabled: true }, carrier: false }
  const tm = cfg.plugins.find((p: { use: string }) => p.use === 'turn_manager')
  tm.options.trigger = 'push_to_talk'
  tm.options.allow_interruptions = false
  const r = await authorize({ config: { clients: cfg.clients, plugins: cfg.plugins } })
  t.equal(r.status, 200, r.text)
  t.same(r.body.config.transcription, { trigger: 'push_to_talk', can_interrupt: false, automatic: false })
})

t.test('browser clients disabled for the agent: authorize is refused', async (t) => {
  const r = await authorize({ config: { clients: { browser: false } } })
  t.equal(r.status, 400)
  t.match(r.body.error, /browser clients are disabled/)
})
