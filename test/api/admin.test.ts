import t from 'tap'
import { startTestGateway, ADMIN_TOKEN } from '../helpers/gateway.js'

const gw = await startTestGateway()
t.teardown(() => gw.close())

t.test('admin API rejects missing and wrong tokens with 401', async (t) => {
  const none = await gw.request('POST', '/admin/v1/organizations', { key: null, body: { name: 'x' } })
  t.equal(none.status, 401)
  t.type(none.body.error, 'string')
  const wrong = await gw.request('POST', '/admin/v1/organizations', { key: 'nope', body: { name: 'x' } })
  t.equal(wrong.status, 401)
  t.equal(wrong.body.error, 'invalid admin token')
  // An API key is not an admin token.
  const apiKey = await gw.request('POST', '/admin/v1/organizations', { body: { name: 'x' } })
  t.equal(apiKey.status, 401)
})

t.test('admin API is disabled without ADMIN_TOKEN', async (t) => {
  const other = await startTestGateway({ ADMIN_TOKEN: '' })
  t.teardown(() => other.close())
  const r = await other.request('POST', '/admin/v1/organizations', { key: ADMIN_TOKEN, body: { name: 'x' } })
  t.equal(r.status, 403)
  t.match(r.body.error, /disabled/)
})

t.test('create organization: defaults, shape, and a working key', async (t) => {
  const r = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'Acme' } })
  t.equal(r.status, 201)
  t.same(Object.keys(r.body).sort(), [
    'api_key',
    'balance',
    'id',
    'limits',
    'max_concurrent_sessions',
    'name',
    'outbound_calls_per_second',
    'recording_enabled',
  ])
  t.equal(r.body.name, 'Acme')
  t.equal(r.body.balance, null, 'unlimited balance by default')
  t.equal(r.body.max_concurrent_sessions, 50)
  t.equal(r.body.recording_enabled, false)
  t.equal(r.body.outbound_calls_per_second, 1, 'the carrier account default: one call per second')
  t.match(r.body.api_key, /^vgk_[A-Za-z0-9_-]{43}$/)
  const list = await gw.request('GET', '/v1/agents', { key: r.body.api_key })
  t.equal(list.status, 200)
  t.same(list.body, { agents: [] })
})

t.test('create organization with every field, then patch', async (t) => {
  const r = await gw.request('POST', '/admin/v1/organizations', {
    admin: true,
    body: { name: 'B', balance: 12.5, max_concurrent_sessions: 3, recording_enabled: true },
  })
  t.equal(r.status, 201)
  t.equal(r.body.balance, 12.5)
  t.equal(r.body.max_concurrent_sessions, 3)
  t.equal(r.body.recording_enabled, true)
  const p = await gw.request('PATCH', `/admin/v1/organizations/${r.body.id}`, {
    admin: true,
    body: { balance: 0, max_concurrent_sessions: null, name: 'B2' },
  })
  t.equal(p.status, 200)
  t.equal(p.body.balance, 0)
  t.equal(p.body.max_concurrent_sessions, null)
  t.equal(p.body.name, 'B2')
  t.equal(p.body.recording_enabled, true, 'untouched field kept')
  const g = await gw.request('GET', `/admin/v1/organizations/${r.body.id}`, { admin: true })
  t.equal(g.body.balance, 0)
})

t.test('organization validation errors are 400 with the field named', async (t) => {
  const cases: [unknown, RegExp][] = [
    [{}, /name is required/],
    [{ name: '' }, /name/],
    [{ name: 'x', balance: 'lots' }, /balance must be a number/],
    [{ name: 'x', max_concurrent_sessions: -1 }, /max_concurrent_sessions/],
    [{ name: 'x', max_concurrent_sessions: 1.5 }, /max_concurrent_sessions/],
    [{ name: 'x', recording_enabled: 'yes' }, /recording_enabled must be a boolean/],
    [{ name: 'x', extra: 1 }, /extra is not a known field/],
    [[1, 2], /JSON object/],
  ]
  for (const [body, re] of cases) {
    const r = await gw.request('POST', '/admin/v1/organizations', { admin: true, body })
    t.equal(r.status, 400, JSON.stringify(body))
    t.match(r.body.error, re)
  }
  const badJson = await gw.request('POST', '/admin/v1/organizations', {
    admin: true,
    rawBody: '{"name":',
    headers: { 'content-type': 'application/json' },
  })
  t.equal(badJson.status, 400)
  t.equal(badJson.body.error, 'request body is not valid JSON')
  const notFound = await gw.request('PATCH', '/admin/v1/organizations/org_nope', { admin: true, body: { name: 'x' } })
  t.equal(notFound.status, 404)
})

t.test('extra API keys work; unknown org is 404', async (t) => {
  const k = await gw.request('POST', `/admin/v1/organizations/${gw.orgId}/api_keys`, { admin: true })
  t.equal(k.status, 201)
  t.match(k.body.api_key, /^vgk_/)
  t.not(k.body.api_key, gw.apiKey)
  const list = await gw.request('GET', '/v1/agents', { key: k.body.api_key })
  t.equal(list.status, 200)
  const nf = await gw.request('POST', '/admin/v1/organizations/org_missing/api_keys', { admin: true })
  t.equal(nf.status, 404)
})

t.test('carrier credentials: stored, never returned, validated', async (t) => {
  const secret = 'carrier-secret-token-abcdef'
  const r = await gw.request('PUT', `/admin/v1/organizations/${gw.orgId}/carrier`, {
    admin: true,
    body: { account_sid: 'AC123', auth_token: secret, api_base_url: 'http://127.0.0.1:9999/' },
  })
  t.equal(r.status, 200)
  t.notMatch(r.text, secret)
  t.equal(r.body.api_base_url, 'http://127.0.0.1:9999')
  const g = await gw.request('GET', `/admin/v1/organizations/${gw.orgId}`, { admin: true })
  t.equal(g.body.carrier_configured, true)
  t.notMatch(g.text, secret)
  const row = await gw.store.db
    .selectFrom('organizations')
    .select(['carrier_auth_token', 'carrier_account_sid'])
    .where('id', '=', gw.orgId)
    .executeTakeFirstOrThrow()
  t.equal(row.carrier_account_sid, 'AC123')
  t.equal(row.carrier_auth_token, secret)
  const bad = await gw.request('PUT', `/admin/v1/organizations/${gw.orgId}/carrier`, { admin: true, body: { account_sid: 'AC1' } })
  t.equal(bad.status, 400)
  t.match(bad.body.error, /auth_token is required/)
  const badUrl = await gw.request('PUT', `/admin/v1/organizations/${gw.orgId}/carrier`, {
    admin: true,
    body: { account_sid: 'AC1', auth_token: 'abcdefghij', api_base_url: 'ftp://x' },
  })
  t.equal(badUrl.status, 400)
  t.match(badUrl.body.error, /api_base_url/)
})

t.test('outbound_calls_per_second: set, reset with null, bad values refused', async (t) => {
  const r = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'Pace', outbound_calls_per_second: 5 } })
  t.equal(r.body.outbound_calls_per_second, 5)
  const p = await gw.request('PATCH', `/admin/v1/organizations/${r.body.id}`, { admin: true, body: { outbound_calls_per_second: 0.5 } })
  t.equal(p.body.outbound_calls_per_second, 0.5)
  const reset = await gw.request('PATCH', `/admin/v1/organizations/${r.body.id}`, {
    admin: true,
    body: { outbound_calls_per_second: null },
  })
  t.equal(reset.body.outbound_calls_per_second, 1)
  for (const bad of [0, -1, 1001, 'fast']) {
    const b = await gw.request('PATCH', `/admin/v1/organizations/${r.body.id}`, { admin: true, body: { outbound_calls_per_second: bad } })
    t.equal(b.status, 400, JSON.stringify(bad))
    t.equal(b.body.code, 'validation_failed')
  }
})
