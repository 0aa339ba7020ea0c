import t from 'tap'
import { testDb } from '../helpers/db.js'
import { createOrganization } from '../../gateway/store/organizations.js'
import { isCapReached } from '../../gateway/store/organization-caps.js'
import { createSipTrunk, deleteSipTrunk, trunksForSource, type SipTrunkFields } from '../../gateway/store/sip-trunks.js'

// trunksForSource: which trunks, of any organization, let an INVITE from an address in. Postgres' inet does the
// match, so this runs on PGlite and on the server alike.
const db = await testDb()
t.teardown(() => db.cleanup())
const store = db.store.db

const a = (await createOrganization(store, { name: 'A' })).organization.id
const b = (await createOrganization(store, { name: 'B' })).organization.id
const trunk = (name: string, allowedCidrs: string[]): SipTrunkFields => ({
  name,
  inbound: { allowedCidrs, username: null, passwordSealed: null },
  outbound: null,
})
async function make(org: string, name: string, cidrs: string[]): Promise<string> {
  const row = await createSipTrunk(store, org, trunk(name, cidrs))
  if (isCapReached(row)) throw new Error('limit')
  return row.id
}
const names = async (ip: string) => (await trunksForSource(store, ip)).map((r) => r.name)

const office = await make(a, 'a-office', ['203.0.113.0/24', '2001:db8:1::/48'])
const host = await make(a, 'a-host', ['198.51.100.7'])
const sbc = await make(b, 'b-sbc', ['203.0.113.128/25', '2001:db8:1:2::/64'])
await make(b, 'b-credentials-only', [])
await make(b, 'b-host-bits', ['192.0.2.77/24'])

t.test('IPv4: inside a range, on its edges and just outside', async (t) => {
  t.same(await names('203.0.113.1'), ['a-office'])
  t.same(await names('203.0.113.0'), ['a-office'], 'the network address itself')
  t.same(await names('203.0.112.255'), [])
  t.same(await names('203.0.114.0'), [])
  t.same(await names('10.0.0.1'), [])
})

t.test('a bare address is one host (/32)', async (t) => {
  t.same(await names('198.51.100.7'), ['a-host'])
  t.same(await names('198.51.100.8'), [])
  t.same(await names('198.51.100.6'), [])
})

t.test('a range written with host bits set still means its network', async (t) => {
  t.same(await names('192.0.2.1'), ['b-host-bits'])
  t.same(await names('192.0.3.1'), [])
})

t.test('overlapping trunks of two organizations: both, oldest first; the caller of the store tells them apart', async (t) => {
  t.same(await names('203.0.113.200'), ['a-office', 'b-sbc'])
  t.same(await names('203.0.113.127'), ['a-office'], 'below the /25')
})

t.test('IPv6: prefixes, nesting, and no match across families', async (t) => {
  t.same(await names('2001:db8:1::5'), ['a-office'])
  t.same(await names('2001:db8:1:2::5'), ['a-office', 'b-sbc'], 'inside both the /48 and the /64')
  t.same(await names('2001:DB8:1:2:0:0:0:5'), ['a-office', 'b-sbc'], 'any spelling of the address')
  t.same(await names('2001:db8:2::1'), [])
  t.same(await names('::1'), [])
})

t.test('an IPv4-mapped IPv6 source (a dual-stack socket) is its IPv4 address', async (t) => {
  t.same(await names('::ffff:198.51.100.7'), ['a-host'])
  t.same(await names('::FFFF:203.0.113.200'), ['a-office', 'b-sbc'])
})

t.test('not an address: no trunk, no database error', async (t) => {
  for (const bad of ['', 'example.com', '203.0.113.1/24', '999.1.1.1', "1.2.3.4'; drop table sip_trunks; --"]) {
    t.same(await names(bad), [], JSON.stringify(bad))
  }
})

t.test('a source with a zone id (link-local, from a socket) matches by its address', async (t) => {
  const link = await make(a, 'a-link-local', ['fe80::/64'])
  t.same(await names('fe80::1%eth0'), ['a-link-local'])
  t.same(await names('fe80::1'), ['a-link-local'])
  t.ok(await deleteSipTrunk(store, a, link))
})

t.test('a trunk with credentials only and no allow-list is never matched by address', async (t) => {
  const all = (await store.selectFrom('sip_trunks').select('name').execute()).map((r) => r.name)
  t.ok(all.includes('b-credentials-only'))
  for (const ip of ['203.0.113.1', '198.51.100.7', '2001:db8:1::5', '0.0.0.0']) {
    t.notOk((await names(ip)).includes('b-credentials-only'), ip)
  }
})

t.test('a deleted trunk no longer matches; the other organization keeps its own', async (t) => {
  t.ok(await deleteSipTrunk(store, a, office))
  t.same(await names('203.0.113.200'), ['b-sbc'])
  t.equal(await deleteSipTrunk(store, a, sbc), undefined, "an organization cannot delete another's trunk")
  t.same(await names('198.51.100.7'), ['a-host'], host)
})
