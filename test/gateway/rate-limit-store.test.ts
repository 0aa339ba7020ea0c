import t from 'tap'
import { testDb } from '../helpers/db.js'
import { createOrganization, updateOrganization } from '../../gateway/store/organizations.js'
import { takeToken } from '../../gateway/store/rate-limits.js'
import { DEFAULT_RATES } from '../../gateway/store/organization-limits.js'

// The token bucket itself, on the store: every time is given, so nothing here waits or depends on the wall clock.
const db = await testDb()
t.teardown(() => db.cleanup())
const store = db.store.db

const T0 = Date.parse('2030-01-01T00:00:00Z')
const at = (ms: number) => new Date(T0 + ms)

async function org(name: string, rate: { per_second: number; burst: number }): Promise<string> {
  const id = (await createOrganization(store, { name })).organization.id
  await updateOrganization(store, id, { limits: { create_agent: rate } })
  return id
}

const take = (organizationId: string, ms: number) => takeToken(store, { organizationId, action: 'create_agent', now: at(ms) })

t.test('a full bucket passes its burst at once, then refuses with the time until the next token', async (t) => {
  const id = await org('burst', { per_second: 2, burst: 3 })
  for (let i = 0; i < 3; i++) t.same(await take(id, 0), { ok: true }, `request ${i + 1} of the burst passes`)
  const refused = await take(id, 0)
  t.equal(refused.ok, false, 'the fourth is refused')
  if (!refused.ok) t.equal(refused.retryAfterSeconds, 0.5, 'one token comes back after 1 / per_second')
  const stillRefused = await take(id, 200)
  if (!stillRefused.ok) t.equal(stillRefused.retryAfterSeconds, 0.3, 'a refusal takes nothing: 0.3 s left at 200 ms')
  else t.fail('refused at 200 ms')
})

t.test('the bucket refills at the rate and holds at most its burst', async (t) => {
  const id = await org('refill', { per_second: 2, burst: 3 })
  for (let i = 0; i < 3; i++) await take(id, 0)
  t.same(await take(id, 500), { ok: true }, 'one token after 0.5 s')
  t.equal((await take(id, 500)).ok, false, 'and only one')
  // An hour idle refills to the burst, not to 7,200 tokens.
  for (let i = 0; i < 3; i++) t.same(await take(id, 3_600_000), { ok: true })
  t.equal((await take(id, 3_600_000)).ok, false, 'the burst caps what an idle hour saves')
})

t.test('a clock that lags (another replica) neither refills nor drains the bucket', async (t) => {
  const id = await org('lag', { per_second: 1, burst: 2 })
  await take(id, 10_000)
  await take(id, 10_000)
  t.equal((await take(id, 5_000)).ok, false, 'a check from 5 s earlier finds the bucket empty')
  t.same(await take(id, 11_000), { ok: true }, 'and the refill goes on from the latest time seen')
})

t.test('checks at once take exactly the burst: the update is atomic', async (t) => {
  const id = await org('race', { per_second: 1, burst: 5 })
  const results = await Promise.all(Array.from({ length: 20 }, () => take(id, 0)))
  t.equal(results.filter((r) => r.ok).length, 5, '5 of 20 pass')
})

t.test('organizations and actions have buckets of their own; null goes back to the default', async (t) => {
  const a = await org('a', { per_second: 1, burst: 1 })
  const b = await org('b', { per_second: 1, burst: 1 })
  await take(a, 0)
  t.equal((await take(a, 0)).ok, false, 'a is empty')
  t.same(await take(b, 0), { ok: true }, 'b is not')
  t.same(await takeToken(store, { organizationId: a, action: 'authorize_session', now: at(0) }), { ok: true }, "a's other routes are not")
  await updateOrganization(store, a, { limits: { create_agent: null } })
  const { burst } = DEFAULT_RATES.create_agent
  for (let i = 0; i < burst; i++) await take(a, 3_600_000)
  const refused = await take(a, 3_600_000)
  t.equal(refused.ok, false, `the default burst (${burst}) passed, the next is refused`)
  if (!refused.ok) t.equal(refused.retryAfterSeconds, 1 / DEFAULT_RATES.create_agent.per_second, 'at the default rate')
})

t.test('an unknown organization is not limited here (authentication refuses it first)', async (t) => {
  t.same(await takeToken(store, { organizationId: 'org_nope', action: 'create_agent', now: at(0) }), { ok: true })
})
