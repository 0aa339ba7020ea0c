import t from 'tap'
import { SCRIPTED_LINES } from '../../pipeline/agent/scripted-agent.js'
import { startTestGateway } from '../helpers/gateway.js'
import { createServer } from 'node:http'
import { closed, connectBrowser, openBrowserSession } from '../helpers/ws-client.js'
import { eventually } from '../helpers/eventually.js'

// Agent links (an addition): a link's token authorizes browser sessions with its agent and nothing else, and a
// revoked link authorizes nothing.
const gw = await startTestGateway()
t.teardown(() => gw.close())
const first = gw.firstStart
if (first === undefined) throw new Error('no first start')

const other = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'Other' } })
const otherKey: string = other.body.api_key
const tokenOf = (url: string) => new URL(url).hash.replace(/^#link=/, '')
const authorizeWith = (token: string | null, body: unknown = {}) =>
  gw.request('POST', '/v1/agent_links/authorize_session', { key: token, body })

t.test('the first-start link opens a browser session with the demo agent, which answers typed text', async (t) => {
  const r = await authorizeWith(tokenOf(first.linkUrl))
  t.equal(r.status, 200, r.text)
  t.type(r.body.client_session_key, 'string')
  t.type(r.body.conversation_id, 'string')
  t.ok(r.body.config, 'the frontend config, as authorize_session gives')
  const session = await gw.store.db
    .selectFrom('sessions')
    .select(['agent_id', 'organization_id'])
    .where('conversation_id', '=', r.body.conversation_id)
    .executeTakeFirstOrThrow()
  t.same(session, { agent_id: first.agentId, organization_id: first.organizationId })

  const b = await openBrowserSession(gw.url, r.body.client_session_key, { acknowledgePlayback: true })
  const { m: welcome } = await b.waitFor((m) => m.type === 'turn.end' && m.role === 'assistant')
  b.send({ type: 'client.response.text', content: 'what can you do' })
  const reply = await b.waitFor((m) => m.type === 'response.text' && m.turn_id !== welcome.turn_id)
  t.equal(reply.m.content, SCRIPTED_LINES.capabilities, 'the scripted demo agent answers what it was asked, without any vendor key')
  b.close()
})

t.test('a link grants only sessions with its agent: no config, metadata or other agent, no REST API', async (t) => {
  const token = tokenOf(first.linkUrl)
  for (const body of [{ agent_id: first.agentId }, { config: { type: 'voice' } }, { metadata: { a: 1 } }]) {
    const r = await authorizeWith(token, body)
    t.equal(r.status, 400, JSON.stringify(body))
    t.equal(r.body.code, 'validation_failed')
  }
  const rest = await gw.request('GET', '/v1/agents', { key: token })
  t.equal(rest.status, 400)
  t.equal(rest.body.code, 'invalid_api_key', 'a link token is not an API key')
  const withKey = await authorizeWith(gw.apiKey)
  t.equal(withKey.status, 401, 'an API key is not a link token')
  t.equal(withKey.body.code, 'invalid_agent_link')
  const missing = await authorizeWith(null)
  t.equal(missing.status, 400)
  t.equal(missing.body.code, 'missing_api_key')
})

t.test('create, list and revoke links; a revoked link authorizes nothing more', async (t) => {
  const created = await gw.request('POST', `/v1/agents/${first.agentId}/links`)
  t.equal(created.status, 201, created.text)
  t.match(created.body, { agent_id: first.agentId, revoked_at: null })
  t.match(created.body.url, new RegExp(`^${gw.config.publicUrl}/#link=vxl_`))
  const token = tokenOf(created.body.url)
  t.equal((await authorizeWith(token)).status, 200)

  const list = await gw.request('GET', `/v1/agents/${first.agentId}/links`)
  t.same(list.body.links.map((l: { id: string }) => l.id).sort(), [first.linkId, created.body.id].sort())
  t.notOk(JSON.stringify(list.body).includes(token), 'tokens are never listed')
  t.notOk(JSON.stringify(await gw.store.db.selectFrom('agent_links').selectAll().execute()).includes(token), 'only the hash is stored')

  const revoked = await gw.request('DELETE', `/v1/agents/${first.agentId}/links/${created.body.id}`)
  t.equal(revoked.status, 200)
  t.type(revoked.body.revoked_at, 'string')
  const again = await authorizeWith(token)
  t.equal(again.status, 401)
  t.equal(again.body.code, 'invalid_agent_link')
  t.equal((await authorizeWith(tokenOf(first.linkUrl))).status, 200, 'the other link still works')
})

t.test("another organization cannot see, create or revoke this agent's links", async (t) => {
  for (const [method, path] of [
    ['GET', `/v1/agents/${first.agentId}/links`],
    ['POST', `/v1/agents/${first.agentId}/links`],
    ['DELETE', `/v1/agents/${first.agentId}/links/${first.linkId}`],
  ] as const) {
    const r = await gw.request(method, path, { key: otherKey })
    t.equal(r.status, 404, `${method} ${path}`)
    t.equal(r.body.code, 'agent_not_found')
  }
  const unknown = await gw.request('DELETE', `/v1/agents/${first.agentId}/links/lnk_nope`)
  t.equal(unknown.status, 404)
  t.equal(unknown.body.code, 'agent_link_not_found')
  t.equal((await authorizeWith(tokenOf(first.linkUrl))).status, 200, 'still live')
})

t.test("revoking a link ends the keys it issued that never connected; another link's key still connects", async (t) => {
  // The lifecycle webhooks go here: a key ended by revocation began nothing, so nothing is sent for it.
  const events: { type: string; session_id: string }[] = []
  const receiver = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      events.push(JSON.parse(body))
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
  t.teardown(() => receiver.close())
  const config = (await gw.request('GET', `/v1/agents/${first.agentId}`)).body.config
  config.session_webhook = {
    url: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`,
    events: ['session.start', 'session.end'],
  }
  t.equal((await gw.request('POST', `/v1/agents/${first.agentId}`, { body: { config } })).status, 200)

  const revokedLink = await gw.request('POST', `/v1/agents/${first.agentId}/links`)
  const keptLink = await gw.request('POST', `/v1/agents/${first.agentId}/links`)
  const unused = await authorizeWith(tokenOf(revokedLink.body.url))
  const inCall = await authorizeWith(tokenOf(revokedLink.body.url))
  const kept = await authorizeWith(tokenOf(keptLink.body.url))
  t.same([unused.status, inCall.status, kept.status], [200, 200, 200])
  // A key of the link that connected before the revocation: its session goes on.
  const live = await connectBrowser(gw.url, inCall.body.client_session_key)
  if (!live.ok) throw new Error(`the key did not connect: ${JSON.stringify(live.body)}`)

  t.equal((await gw.request('DELETE', `/v1/agents/${first.agentId}/links/${revokedLink.body.id}`)).status, 200)
  const refused = await connectBrowser(gw.url, unused.body.client_session_key)
  t.same(
    refused.ok ? 'connected' : [refused.status, refused.body.error],
    [401, 'client_session_key has expired (keys are valid for 1 hour)'],
    'refused like an expired key',
  )
  const row = await gw.store.db
    .selectFrom('sessions')
    .select(['id', 'status', 'end_reason', 'ended_at', 'duration_ms', 'key_used_at', 'charged'])
    .where('conversation_id', '=', unused.body.conversation_id)
    .executeTakeFirstOrThrow()
  t.match(row, { status: 'ended', end_reason: 'superseded', ended_at: null, duration_ms: null, key_used_at: null }, 'ended, never begun')
  const liveRow = await gw.store.db
    .selectFrom('sessions')
    .select('status')
    .where('conversation_id', '=', inCall.body.conversation_id)
    .executeTakeFirstOrThrow()
  t.equal(liveRow.status, 'connected', 'the session that had connected goes on')

  const other = await connectBrowser(gw.url, kept.body.client_session_key)
  t.ok(other.ok, 'a key of another, unrevoked link still connects')
  if (other.ok) {
    const c = closed(other.ws)
    other.ws.close()
    await c
  }
  const c = closed(live.ws)
  live.ws.close()
  await c
  const keptSession = await gw.store.db
    .selectFrom('sessions')
    .select('id')
    .where('conversation_id', '=', kept.body.conversation_id)
    .executeTakeFirstOrThrow()
  await eventually(
    async () => (events.some((e) => e.type === 'session.end' && e.session_id === keptSession.id) ? true : undefined),
    10_000,
    'session.end of the kept key',
  )
  t.notOk(
    events.some((e) => e.session_id === row.id),
    'no webhook for the revoked key',
  )
})
