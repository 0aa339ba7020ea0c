import t from 'tap'
import { randomBytes } from 'node:crypto'
import { startTestGateway } from '../helpers/gateway.js'
import { openSecret } from '../../core/secret-box.js'
import { MAX_SIP_TRUNK_CIDRS, MAX_SIP_TRUNKS_PER_ORGANIZATION, sipTrunkPasswords } from '../../gateway/store/sip-trunks.js'

// /v1/sip/trunks: an organization's SIP trunks; passwords are sealed under SIP_CREDENTIALS_KEY and
// never come back out.
const key = randomBytes(32)
const gw = await startTestGateway({ SIP_CREDENTIALS_KEY: key.toString('hex') })
t.teardown(() => gw.close())
const other = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'Other' } })
const otherKey: string = other.body.api_key
// This file sends dozens of trunk creations in a moment (most of them invalid); the creation rate is not what it tests.
await gw.request('PATCH', `/admin/v1/organizations/${gw.orgId}`, {
  admin: true,
  body: { limits: { create_sip_trunk: { per_second: 1000, burst: 1000 } } },
})

const FULL = {
  name: 'Office PBX',
  inbound: { allowed_cidrs: ['203.0.113.0/24', '2001:db8::/32'], username: 'pbx', password: 'inbound-secret-1' },
  outbound: {
    uri: 'sip:trunk.example.com;transport=tcp',
    username: 'acct',
    password: 'outbound-secret-2',
    from_number: '+1 (415) 555-2671',
  },
}
const rowOf = (id: string) => gw.store.db.selectFrom('sip_trunks').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
const create = (body: unknown, apiKey?: string) => gw.request('POST', '/v1/sip/trunks', { body, ...(apiKey ? { key: apiKey } : {}) })

t.test('create, get, list, patch and delete a trunk; no answer carries a password', async (t) => {
  const c = await create(FULL)
  t.equal(c.status, 201, c.text)
  t.match(c.body.id, /^sip_/)
  t.same(c.body.inbound, { allowed_cidrs: ['203.0.113.0/24', '2001:db8::/32'], username: 'pbx', has_password: true })
  t.same(c.body.outbound, { uri: 'sip:trunk.example.com;transport=tcp', username: 'acct', has_password: true, from_number: '+14155552671' })
  const id: string = c.body.id

  const got = await gw.request('GET', `/v1/sip/trunks/${id}`)
  t.equal(got.status, 200)
  t.same(got.body, c.body)
  const list = await gw.request('GET', '/v1/sip/trunks')
  t.same(
    list.body.trunks.map((x: { id: string }) => x.id),
    [id],
  )
  for (const answer of [c.text, got.text, list.text]) {
    t.notMatch(answer, /secret-|"password"/, 'neither a password nor a password field')
  }

  const p = await gw.request('PATCH', `/v1/sip/trunks/${id}`, { body: { name: 'Renamed', inbound: { allowed_cidrs: ['198.51.100.7'] } } })
  t.equal(p.status, 200, p.text)
  t.equal(p.body.name, 'Renamed')
  t.same(p.body.inbound, { allowed_cidrs: ['198.51.100.7'], username: 'pbx', has_password: true }, 'the omitted username and password stay')
  t.same(p.body.outbound, c.body.outbound, 'an omitted side stays')
  t.same(sipTrunkPasswords(await rowOf(id), key), { inbound: 'inbound-secret-1', outbound: 'outbound-secret-2' })

  const cleared = await gw.request('PATCH', `/v1/sip/trunks/${id}`, { body: { outbound: { username: null, password: null } } })
  t.equal(cleared.status, 200, cleared.text)
  t.same(cleared.body.outbound, {
    uri: 'sip:trunk.example.com;transport=tcp',
    username: null,
    has_password: false,
    from_number: '+14155552671',
  })
  t.equal((await rowOf(id)).outbound_password_sealed, null, 'null clears the stored password')

  const [x, y] = await Promise.all([
    gw.request('PATCH', `/v1/sip/trunks/${id}`, { body: { name: 'Concurrent' } }),
    gw.request('PATCH', `/v1/sip/trunks/${id}`, { body: { inbound: { allowed_cidrs: ['198.51.100.8'] } } }),
  ])
  t.same([x.status, y.status], [200, 200])
  const both = (await gw.request('GET', `/v1/sip/trunks/${id}`)).body
  t.same([both.name, both.inbound.allowed_cidrs], ['Concurrent', ['198.51.100.8']], 'two concurrent changes both land')
  t.ok(both.updated_at > c.body.updated_at, 'updated_at moves')

  const noOutbound = await gw.request('PATCH', `/v1/sip/trunks/${id}`, { body: { outbound: null } })
  t.equal(noOutbound.body.outbound, null)

  const d = await gw.request('DELETE', `/v1/sip/trunks/${id}`)
  t.equal(d.status, 200)
  t.equal(d.body.id, id)
  t.equal((await gw.request('GET', `/v1/sip/trunks/${id}`)).status, 404)
  t.equal((await gw.request('DELETE', `/v1/sip/trunks/${id}`)).body.code, 'sip_trunk_not_found')
})

t.test('passwords are stored sealed: the row holds neither the password nor its plain encoding', async (t) => {
  const c = await create(FULL)
  const row = await rowOf(c.body.id)
  for (const [sealed, plain] of [
    [row.inbound_password_sealed, 'inbound-secret-1'],
    [row.outbound_password_sealed, 'outbound-secret-2'],
  ] as const) {
    if (sealed === null) throw new Error('no sealed password')
    t.match(sealed, /^v1\./)
    t.notOk(JSON.stringify(row).includes(plain))
    t.notOk(sealed.includes(Buffer.from(plain).toString('base64url')))
    t.equal(openSecret(key, sealed), plain)
    t.throws(() => openSecret(randomBytes(32), sealed), 'another key cannot open it')
  }
  const again = await create(FULL)
  t.not((await rowOf(again.body.id)).inbound_password_sealed, row.inbound_password_sealed, 'a fresh IV each time')
  await gw.request('DELETE', `/v1/sip/trunks/${c.body.id}`)
  await gw.request('DELETE', `/v1/sip/trunks/${again.body.id}`)
})

t.test('every validation error names its field, with code validation_failed', async (t) => {
  const cases: [string, unknown, RegExp][] = [
    ['no name', { inbound: { allowed_cidrs: ['10.0.0.0/8'] } }, /name/],
    ['a long name', { name: 'x'.repeat(101), inbound: { allowed_cidrs: ['10.0.0.0/8'] } }, /name/],
    ['an unknown field', { name: 'a', inbound: { allowed_cidrs: ['10.0.0.0/8'] }, nmae: 1 }, /nmae/],
    ['not a CIDR', { name: 'a', inbound: { allowed_cidrs: ['10.0.0.300/8'] } }, /inbound\.allowed_cidrs\[0\].*not an IP/],
    ['a bad prefix', { name: 'a', inbound: { allowed_cidrs: ['10.0.0.0/33'] } }, /inbound\.allowed_cidrs\[0\].*prefix/],
    ['a zone id', { name: 'a', inbound: { allowed_cidrs: ['fe80::1%eth0'] } }, /inbound\.allowed_cidrs\[0\].*zone id/],
    ['IPv4 /0', { name: 'a', inbound: { allowed_cidrs: ['0.0.0.0/0'] } }, /inbound\.allowed_cidrs\[0\].*every address/],
    ['IPv6 /0', { name: 'a', inbound: { allowed_cidrs: ['::/0'] } }, /inbound\.allowed_cidrs\[0\].*every address/],
    [
      'too many CIDRs',
      { name: 'a', inbound: { allowed_cidrs: Array.from({ length: MAX_SIP_TRUNK_CIDRS + 1 }, (_, i) => `10.0.${i}.0/24`) } },
      /inbound\.allowed_cidrs/,
    ],
    ['an empty inbound side', { name: 'a', inbound: {} }, /inbound needs allowed_cidrs/],
    ['a username without a password', { name: 'a', inbound: { username: 'pbx' } }, /inbound needs a username and a password together/],
    ['a short password', { name: 'a', inbound: { username: 'pbx', password: 'short' } }, /inbound\.password/],
    ['a username with a colon', { name: 'a', inbound: { username: 'a:b', password: 'long-enough' } }, /inbound\.username/],
    ['neither side', { name: 'a' }, /inbound or outbound is required/],
    ['outbound without a uri', { name: 'a', outbound: { username: 'u', password: 'long-enough' } }, /outbound\.uri/],
    ['an http uri', { name: 'a', outbound: { uri: 'http://trunk.example.com' } }, /outbound\.uri.*sip: or sips:/],
    ['a bare host', { name: 'a', outbound: { uri: 'trunk.example.com' } }, /outbound\.uri/],
    ['a bad from_number', { name: 'a', outbound: { uri: 'sips:t.example.com', from_number: '555-2671' } }, /outbound\.from_number/],
    [
      'an outbound password alone',
      { name: 'a', outbound: { uri: 'sip:t.example.com', password: 'long-enough' } },
      /outbound needs a username and a password together/,
    ],
  ]
  for (const [what, body, field] of cases) {
    const r = await create(body)
    t.equal(r.status, 400, what)
    t.equal(r.body.code, 'validation_failed', what)
    t.match(r.body.error, field, `${what}: ${r.body.error}`)
    t.ok(Array.isArray(r.body.details) && r.body.details.length > 0, `${what}: details`)
  }
  t.same((await gw.request('GET', '/v1/sip/trunks')).body.trunks, [], 'nothing was created')
  const short = await create({ name: 'a', inbound: { username: 'pbx', password: 'sh0rt' } })
  t.notOk(short.text.includes('sh0rt'), 'an error never echoes a password')

  const ok = await create({ name: 'Outbound only', outbound: { uri: 'SIPS:+14155552671@t.example.com' } })
  t.equal(ok.status, 201, ok.text)
  t.equal(ok.body.inbound, null)
  const patched = await gw.request('PATCH', `/v1/sip/trunks/${ok.body.id}`, { body: { inbound: { username: 'pbx' } } })
  t.equal(patched.status, 400, 'a merge is checked as a whole')
  t.match(patched.body.error, /inbound needs a username and a password together/)
  const cleared = await gw.request('PATCH', `/v1/sip/trunks/${ok.body.id}`, { body: { outbound: null } })
  t.equal(cleared.status, 400, 'a trunk cannot lose both sides')
  t.match(cleared.body.error, /inbound or outbound is required/)
  const unknownField = await gw.request('PATCH', `/v1/sip/trunks/${ok.body.id}`, { body: { outbound: { url: 'sip:x' } } })
  t.match(unknownField.body.error, /url/)
  await gw.request('DELETE', `/v1/sip/trunks/${ok.body.id}`)
})

t.test("another organization's trunk is unknown: 404 on get, patch and delete, absent from its list", async (t) => {
  const mine = await create(FULL)
  const path = `/v1/sip/trunks/${mine.body.id}`
  for (const method of ['GET', 'PATCH', 'DELETE']) {
    const r = await gw.request(method, path, { key: otherKey, ...(method === 'PATCH' ? { body: { name: 'x' } } : {}) })
    t.equal(r.status, 404, method)
    t.equal(r.body.code, 'sip_trunk_not_found', method)
  }
  t.same((await gw.request('GET', '/v1/sip/trunks', { key: otherKey })).body.trunks, [])
  t.equal((await gw.request('GET', path)).body.name, 'Office PBX', 'still there, unchanged')
  t.equal((await gw.request('GET', '/v1/sip/trunks', { key: null })).status, 400, 'no API key')
  await gw.request('DELETE', path)
})

t.test(`an organization has at most ${MAX_SIP_TRUNKS_PER_ORGANIZATION} trunks: then 409 sip_trunk_limit`, async (t) => {
  const ids: string[] = []
  for (let i = 0; i < MAX_SIP_TRUNKS_PER_ORGANIZATION; i++) {
    const r = await create({ name: `t${i}`, inbound: { allowed_cidrs: [`10.1.${i}.0/24`] } })
    t.equal(r.status, 201, r.text)
    ids.push(r.body.id)
  }
  const over = await create({ name: 'one more', inbound: { allowed_cidrs: ['10.2.0.0/24'] } })
  t.equal(over.status, 409)
  t.equal(over.body.code, 'sip_trunk_limit')
  t.equal((await create({ name: 'theirs', inbound: { allowed_cidrs: ['10.2.0.0/24'] } }, otherKey)).status, 201, 'per organization')
  await gw.request('DELETE', `/v1/sip/trunks/${ids[0]}`)
  t.equal((await create({ name: 'after a delete', inbound: { allowed_cidrs: ['10.2.0.0/24'] } })).status, 201)
})

t.test('without SIP_CREDENTIALS_KEY a password is refused (503), a trunk without one is fine', async (t) => {
  const keyless = await startTestGateway()
  t.teardown(() => keyless.close())
  const r = await keyless.request('POST', '/v1/sip/trunks', { body: FULL })
  t.equal(r.status, 503)
  t.equal(r.body.code, 'sip_credentials_key_missing')
  const plain = await keyless.request('POST', '/v1/sip/trunks', {
    body: { name: 'by address', inbound: { allowed_cidrs: ['192.0.2.1'] }, outbound: { uri: 'sip:t.example.com' } },
  })
  t.equal(plain.status, 201, plain.text)
})

t.test(
  'media_encryption (another organization, with room for trunks): none by default, set on create, changed by PATCH, kept when omitted, anything else 400',
  async (t) => {
    const plain = await create({ name: 'plain', inbound: { allowed_cidrs: ['192.0.2.10'] } }, otherKey)
    t.equal(plain.status, 201, plain.text)
    t.equal(plain.body.media_encryption, 'none')
    const secure = await create({ name: 'secure', inbound: { allowed_cidrs: ['192.0.2.11'] }, media_encryption: 'required' }, otherKey)
    t.equal(secure.body.media_encryption, 'required')
    t.equal((await rowOf(secure.body.id)).media_encryption, 'required')
    const renamed = await gw.request('PATCH', `/v1/sip/trunks/${secure.body.id}`, { body: { name: 'still secure' }, key: otherKey })
    t.equal(renamed.body.media_encryption, 'required', 'an omitted setting stays')
    const relaxed = await gw.request('PATCH', `/v1/sip/trunks/${secure.body.id}`, { body: { media_encryption: 'optional' }, key: otherKey })
    t.equal(relaxed.body.media_encryption, 'optional')
    const bad = await create({ name: 'bad', inbound: { allowed_cidrs: ['192.0.2.12'] }, media_encryption: 'zrtp' }, otherKey)
    t.equal(bad.status, 400)
    t.match(bad.body.details.join(' '), /media_encryption/)
    for (const id of [plain.body.id, secure.body.id]) await gw.request('DELETE', `/v1/sip/trunks/${id}`, { key: otherKey })
  },
)
