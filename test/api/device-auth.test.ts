import t from 'tap'
import { startTestGateway, ADMIN_TOKEN } from '../helpers/gateway.js'
import { hashToken } from '../../core/ids.js'
import { createDeviceAuthorization, normalizeUserCode } from '../../gateway/store/device-authorizations.js'

const gw = await startTestGateway()
t.teardown(() => gw.close())

const START = '/v1/cli/device_authorizations'
const CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/

async function start(clientName?: string) {
  const r = await gw.request('POST', START, { key: null, body: clientName === undefined ? {} : { client_name: clientName } })
  if (r.status !== 201) throw new Error(`start: ${r.status} ${r.text}`)
  return r.body as { device_code: string; user_code: string }
}
const poll = (deviceCode: string) => gw.request('POST', `${START}/token`, { key: null, body: { device_code: deviceCode } })

t.test('start: the contract shape, only a hash of the device code stored', async (t) => {
  const r = await gw.request('POST', START, { key: null, body: { client_name: 'my-laptop' } })
  t.equal(r.status, 201)
  t.same(Object.keys(r.body).sort(), [
    'device_code',
    'expires_in',
    'interval',
    'user_code',
    'verification_uri',
    'verification_uri_complete',
  ])
  t.match(r.body.device_code, /^vxd_[A-Za-z0-9_-]{43}$/)
  t.match(r.body.user_code, CODE)
  t.equal(r.body.verification_uri, `${gw.config.publicUrl}/console/device`)
  t.equal(r.body.verification_uri_complete, `${gw.config.publicUrl}/console/device?code=${r.body.user_code}`)
  t.equal(r.body.expires_in, 600)
  t.equal(r.body.interval, 1)
  const rows = await gw.store.db.selectFrom('device_authorizations').selectAll().execute()
  const row = rows.find((x) => x.device_code_hash === hashToken(r.body.device_code))
  t.ok(row, 'stored by hash')
  t.notOk(JSON.stringify(rows).includes(r.body.device_code), 'the plain device code is nowhere in the table')
  t.equal(row?.client_name, 'my-laptop')
  t.equal(row?.status, 'pending')
})

t.test('start: bad bodies get the error body', async (t) => {
  const long = await gw.request('POST', START, { key: null, body: { client_name: 'x'.repeat(101) } })
  t.equal(long.status, 400)
  t.equal(long.body.code, 'validation_failed')
  t.match(long.body.details[0], /client_name/)
  const extra = await gw.request('POST', START, { key: null, body: { scope: 'all' } })
  t.equal(extra.status, 400)
})

t.test('approve with an API key: pending, then the key exactly once', async (t) => {
  const d = await start('ci box')
  const pending = await poll(d.device_code)
  t.equal(pending.status, 400)
  t.equal(pending.body.code, 'authorization_pending')
  t.type(pending.body.error, 'string')

  // Case-insensitive, hyphen optional.
  const typed = d.user_code.replace('-', '').toLowerCase()
  const ok = await gw.request('POST', `${START}/approve`, { body: { user_code: typed } })
  t.equal(ok.status, 200)
  t.same(ok.body, { organization_id: gw.orgId, organization_name: (await gw.request('GET', '/v1/whoami')).body.organization_name })

  const redeemed = await poll(d.device_code)
  t.equal(redeemed.status, 200)
  t.same(Object.keys(redeemed.body).sort(), ['api_key', 'key_id', 'organization_id', 'organization_name'])
  t.match(redeemed.body.api_key, /^vgk_/)
  t.equal(redeemed.body.organization_id, gw.orgId)
  const who = await gw.request('GET', '/v1/whoami', { key: redeemed.body.api_key })
  t.equal(who.status, 200)
  t.same(who.body, { organization_id: gw.orgId, organization_name: redeemed.body.organization_name, key_id: redeemed.body.key_id })
  const keyRow = await gw.store.db.selectFrom('api_keys').selectAll().where('id', '=', redeemed.body.key_id).executeTakeFirstOrThrow()
  t.equal(keyRow.name, 'CLI (ci box)', 'labelled after the client')
  t.equal(keyRow.key_hash, hashToken(redeemed.body.api_key), 'stored as a hash')

  const again = await poll(d.device_code)
  t.equal(again.status, 400)
  t.equal(again.body.code, 'invalid_grant', 'single use')
  const reapprove = await gw.request('POST', `${START}/approve`, { body: { user_code: d.user_code } })
  t.equal(reapprove.status, 404)
  t.equal(reapprove.body.code, 'device_code_not_found')
})

t.test('deny: the CLI hears access_denied', async (t) => {
  const d = await start()
  const r = await gw.request('POST', `${START}/deny`, { body: { user_code: d.user_code } })
  t.equal(r.status, 200)
  const p = await poll(d.device_code)
  t.equal(p.status, 400)
  t.equal(p.body.code, 'access_denied')
  const late = await gw.request('POST', `${START}/approve`, { body: { user_code: d.user_code } })
  t.equal(late.status, 404, 'a denied code cannot be approved after')
})

t.test('expired codes: expired_token when polled, not found when approved', async (t) => {
  const d = await start()
  await gw.store.db
    .updateTable('device_authorizations')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('device_code_hash', '=', hashToken(d.device_code))
    .execute()
  const p = await poll(d.device_code)
  t.equal(p.status, 400)
  t.equal(p.body.code, 'expired_token')
  const a = await gw.request('POST', `${START}/approve`, { body: { user_code: d.user_code } })
  t.equal(a.status, 404)
  t.equal(a.body.code, 'device_code_not_found')
})

t.test('unknown device codes and user codes', async (t) => {
  const p = await poll('vxd_nothing')
  t.equal(p.status, 400)
  t.equal(p.body.code, 'invalid_grant')
  const a = await gw.request('POST', `${START}/approve`, { body: { user_code: 'BCDF-GHJK' } })
  t.equal(a.status, 404)
  const malformed = await gw.request('POST', `${START}/approve`, { body: { user_code: 'ABCD-EFGH' } })
  t.equal(malformed.status, 404, 'letters outside the alphabet cannot match')
  t.equal(normalizeUserCode(' bcdf ghjk '), 'BCDFGHJK')
  t.equal(normalizeUserCode('BCDF-GHJ'), undefined)
})

t.test('approve and deny need credentials', async (t) => {
  const d = await start()
  const none = await gw.request('POST', `${START}/approve`, { key: null, body: { user_code: d.user_code } })
  t.equal(none.status, 401)
  t.equal(none.body.code, 'invalid_credentials')
  const wrong = await gw.request('POST', `${START}/approve`, { key: 'vgk_wrong', body: { user_code: d.user_code } })
  t.equal(wrong.status, 401)
  const denyWrong = await gw.request('POST', `${START}/deny`, { key: 'vgk_wrong', body: { user_code: d.user_code } })
  t.equal(denyWrong.status, 401)
  t.equal((await poll(d.device_code)).body.code, 'authorization_pending', 'still pending after refused attempts')
})

t.test('the admin token approves for a chosen organization', async (t) => {
  const org = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'Other Org' } })
  const d = await start('ops')
  const missing = await gw.request('POST', `${START}/approve`, { key: ADMIN_TOKEN, body: { user_code: d.user_code } })
  t.equal(missing.status, 400)
  t.equal(missing.body.code, 'organization_required')
  const unknown = await gw.request('POST', `${START}/approve`, {
    key: ADMIN_TOKEN,
    body: { user_code: d.user_code, organization_id: 'org_nope' },
  })
  t.equal(unknown.status, 404)
  t.equal(unknown.body.code, 'organization_not_found')
  const ok = await gw.request('POST', `${START}/approve`, {
    key: ADMIN_TOKEN,
    body: { user_code: d.user_code, organization_id: org.body.id },
  })
  t.equal(ok.status, 200)
  t.same(ok.body, { organization_id: org.body.id, organization_name: 'Other Org' })
  const key = (await poll(d.device_code)).body
  t.equal(key.organization_id, org.body.id)
  t.equal(key.organization_name, 'Other Org')
  const agents = await gw.request('GET', '/v1/agents', { key: key.api_key })
  t.same(agents.body, { agents: [] }, "the new key sees the chosen organization's (empty) agents")
  // An API key cannot approve for another organization.
  const d2 = await start()
  const cross = await gw.request('POST', `${START}/approve`, { body: { user_code: d2.user_code, organization_id: org.body.id } })
  t.equal(cross.status, 400)
})

t.test('pending codes are bounded per client IP (429 beyond)', async (t) => {
  const other = await startTestGateway({}, { db: gw.db })
  t.teardown(() => other.close())
  await gw.store.db.deleteFrom('device_authorizations').execute()
  for (let i = 0; i < 100; i++) {
    const r = await other.request('POST', START, { key: null, body: {} })
    if (r.status !== 201) t.fail(`code ${i}: ${r.status}`)
  }
  const over = await other.request('POST', START, { key: null, body: {} })
  t.equal(over.status, 429)
  t.equal(over.body.code, 'too_many_device_codes')
  // The limits are per IP and overall, counted in the database.
  const limits = { perIp: 2, total: 3 }
  const db = gw.store.db
  await db.deleteFrom('device_authorizations').execute()
  const make = (ip: string) => createDeviceAuthorization(db, { clientName: null, clientIp: ip, ttlMs: 60_000, limits })
  t.not(await make('10.0.0.1'), 'limit')
  t.not(await make('10.0.0.1'), 'limit')
  t.equal(await make('10.0.0.1'), 'limit', 'per IP')
  t.not(await make('10.0.0.2'), 'limit')
  t.equal(await make('10.0.0.3'), 'limit', 'overall')
  await db.updateTable('device_authorizations').set({ status: 'denied' }).where('client_ip', '=', '10.0.0.1').execute()
  t.not(await make('10.0.0.1'), 'limit', 'decided codes no longer count')
})

t.test('whoami and logout (DELETE /v1/api_keys/current)', async (t) => {
  const created = await gw.request('POST', `/admin/v1/organizations/${gw.orgId}/api_keys`, { admin: true })
  const key = created.body.api_key as string
  const who = await gw.request('GET', '/v1/whoami', { key })
  t.equal(who.status, 200)
  t.equal(who.body.organization_id, gw.orgId)
  t.match(who.body.key_id, /^key_/)
  const del = await gw.request('DELETE', '/v1/api_keys/current', { key })
  t.equal(del.status, 204)
  const after = await gw.request('GET', '/v1/whoami', { key })
  t.equal(after.status, 400)
  t.equal(after.body.code, 'invalid_api_key', 'the revoked key no longer works')
  t.equal((await gw.request('GET', '/v1/whoami')).status, 200, 'other keys keep working')
})

t.test('the admin token acts for an organization on /v1 only with the organization header', async (t) => {
  const list = await gw.request('GET', '/admin/v1/organizations', { admin: true })
  t.equal(list.status, 200)
  t.ok(list.body.organizations.some((o: { id: string }) => o.id === gw.orgId))
  const without = await gw.request('GET', '/v1/agents', { key: ADMIN_TOKEN })
  t.equal(without.status, 400)
  const withOrg = await gw.request('GET', '/v1/whoami', { key: ADMIN_TOKEN, headers: { 'x-voxgate-organization': gw.orgId } })
  t.equal(withOrg.status, 200)
  t.equal(withOrg.body.key_id, null)
  const unknown = await gw.request('GET', '/v1/agents', { key: ADMIN_TOKEN, headers: { 'x-voxgate-organization': 'org_nope' } })
  t.equal(unknown.status, 404)
  const notAdmin = await gw.request('GET', '/admin/v1/organizations', {})
  t.equal(notAdmin.status, 401)
})

t.test('/console/device is the console page', async (t) => {
  const r = await fetch(`${gw.url}/console/device?code=BCDF-GHJK`)
  t.equal(r.status, 200)
  t.match(r.headers.get('content-type'), /text\/html/)
  t.match(r.headers.get('content-security-policy'), /connect-src 'self'/)
  t.match(await r.text(), /\/console\/assets\/console\.js/)
  const js = await fetch(`${gw.url}/console/assets/console.js`)
  t.equal(js.status, 200)
  t.match(await js.text(), /device-approve/)
})
