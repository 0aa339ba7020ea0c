import t from 'tap'
import pg from 'pg'
import { startTestGateway } from '../helpers/gateway.js'
import { connectBrowser, closed } from '../helpers/ws-client.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { SessionManager } from '../../gateway/sessions/session-manager.js'
import { MemoryTransport } from '../helpers/memory-transport.js'
import { silentLogger } from '../../core/log.js'
import type { SessionRow } from '../../gateway/store/schema.js'

const LEASE_TTL = 3_000
const gw = await startTestGateway({ LEASE_TTL_MS: String(LEASE_TTL) })
t.teardown(() => gw.close())
const onServer = process.env.DATABASE_URL !== undefined

async function limitedOrg(limit: number) {
  const org = (
    await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: `L${limit}`, max_concurrent_sessions: limit } })
  ).body
  const agent = (await gw.request('POST', '/v1/agents', { key: org.api_key, body: {} })).body
  const authorize = async () =>
    (await gw.request('POST', '/v1/agents/web/authorize_session', { key: org.api_key, body: { agent_id: agent.id } })).body
      .client_session_key as string
  return { org, agent, authorize }
}

t.test('429 over the limit; a freed slot can be used again', async (t) => {
  const { authorize } = await limitedOrg(2)
  const a = await connectBrowser(gw.url, await authorize())
  const b = await connectBrowser(gw.url, await authorize())
  t.ok(a.ok && b.ok, 'two sessions fit')
  const thirdKey = await authorize()
  const c = await connectBrowser(gw.url, thirdKey)
  t.equal(c.ok, false)
  if (!c.ok) {
    t.equal(c.status, 429)
    t.equal(c.body.error, 'concurrent session limit reached')
  }
  if (a.ok) {
    const done = closed(a.ws)
    a.ws.close()
    await done
  }
  // The session end is persisted right after the close; give it a moment.
  let again: Awaited<ReturnType<typeof connectBrowser>> | undefined
  for (let i = 0; i < 50; i++) {
    again = await connectBrowser(gw.url, thirdKey)
    if (again.ok) break
    await new Promise((r) => setTimeout(r, 20))
  }
  t.ok(again?.ok, 'the refused key still works once a slot is free')
  if (again?.ok) again.ws.close()
  if (b.ok) b.ws.close()
})

t.test('concurrent starts never exceed the limit (one process)', async (t) => {
  const { authorize } = await limitedOrg(3)
  const keys = await Promise.all(Array.from({ length: 12 }, () => authorize()))
  const results = await Promise.all(keys.map((k) => connectBrowser(gw.url, k)))
  const ok = results.filter((r) => r.ok)
  t.equal(ok.length, 3, 'exactly the limit got through')
  t.ok(results.filter((r) => !r.ok).every((r) => !r.ok && r.status === 429))
  for (const r of ok) if (r.ok) r.ws.close()
})

t.test("a dead process's lease expires and the sweeper ends its session", async (t) => {
  const { org, agent, authorize } = await limitedOrg(1)
  let sessionId: string
  if (onServer) {
    // A real second process on the same server, killed with SIGKILL while it holds a session.
    const child = await spawnGateway({ DATABASE_URL: gw.db.options.databaseUrl!, LEASE_TTL_MS: String(LEASE_TTL), ADMIN_TOKEN: '' })
    t.teardown(() => child.kill())
    const conn = await connectBrowser(child.url, await authorize())
    t.ok(conn.ok, 'connected to the child process')
    await child.kill('SIGKILL')
  } else {
    // PGlite is single-process: a second session manager on the same database stands in for the other
    // process; it stops renewing its leases and never ends its session, exactly as a killed process would.
    const other = new SessionManager(
      { db: gw.store.db, log: silentLogger(), webhookPolicy: { allowInsecureLoopback: true }, usageRatePerMinute: 0 },
      LEASE_TTL,
    )
    const r = await other.open(await authorize(), new MemoryTransport(), { ipAddress: null, countryCode: null })
    t.ok(r.ok, 'the other manager holds a session')
    other.keeper.stop()
    t.teardown(() => other.shutdown(0))
  }
  const row = await gw.store.db
    .selectFrom('sessions')
    .selectAll()
    .where('agent_id', '=', agent.id)
    .where('status', '=', 'connected')
    .executeTakeFirstOrThrow()
  sessionId = row.id
  const blocked = await connectBrowser(gw.url, await authorize())
  t.equal(blocked.ok ? 200 : blocked.status, 429, 'the dead session still holds the only slot')
  const started = Date.now()
  let ended: SessionRow | undefined
  while (Date.now() - started < LEASE_TTL * 4) {
    ended = await gw.store.db.selectFrom('sessions').selectAll().where('id', '=', sessionId).executeTakeFirstOrThrow()
    if (ended.status === 'ended') break
    await new Promise((r) => setTimeout(r, 200))
  }
  t.equal(ended?.status, 'ended', `ended by the sweeper after ${Date.now() - started} ms`)
  t.equal(ended?.end_reason, 'lease_expired')
  t.ok(ended!.ended_at!.getTime() >= ended!.started_at!.getTime())
  const freed = await connectBrowser(gw.url, await authorize())
  t.ok(freed.ok, 'the slot is free again')
  if (freed.ok) freed.ws.close()
  t.ok(org.id)
})

t.test(
  'the limit holds across two gateway processes sharing one Postgres server',
  { skip: !onServer && 'needs DATABASE_URL (PGlite is single-process)' },
  async (t) => {
    const child = await spawnGateway({ DATABASE_URL: gw.db.options.databaseUrl!, LEASE_TTL_MS: String(LEASE_TTL), ADMIN_TOKEN: '' })
    t.teardown(() => child.kill('SIGTERM'))
    const { authorize } = await limitedOrg(2)
    const a = await connectBrowser(gw.url, await authorize())
    const b = await connectBrowser(child.url, await authorize())
    t.ok(a.ok && b.ok, 'one session on each process')
    const c1 = await connectBrowser(gw.url, await authorize())
    const c2 = await connectBrowser(child.url, await authorize())
    t.equal(c1.ok ? 200 : c1.status, 429, 'refused by the parent')
    t.equal(c2.ok ? 200 : c2.status, 429, 'refused by the child')
    for (const r of [a, b]) if (r.ok) r.ws.close()

    // Racing starts on both processes at once.
    const race = await limitedOrg(3)
    const keys = await Promise.all(Array.from({ length: 16 }, () => race.authorize()))
    const results = await Promise.all(keys.map((k, i) => connectBrowser(i % 2 ? child.url : gw.url, k)))
    t.equal(results.filter((r) => r.ok).length, 3, 'exactly the limit across both processes')
    for (const r of results) if (r.ok) r.ws.close()
  },
)

t.test(
  'a refusal over the limit does not wait for the organization lock another process holds',
  { skip: !onServer && 'needs DATABASE_URL: another connection holds the lock' },
  async (t) => {
    const { org, authorize } = await limitedOrg(1)
    const first = await connectBrowser(gw.url, await authorize())
    t.ok(first.ok, 'the one slot is taken')
    const key = await authorize()
    // Another replica stalled (paused, starved) in the middle of its admission transaction, holding the lock.
    const other = new pg.Client({ connectionString: gw.db.options.databaseUrl })
    await other.connect()
    t.teardown(() => other.end())
    await other.query('begin')
    await other.query('select id from organizations where id = $1 for update', [org.id])
    const refused = await Promise.race([
      connectBrowser(gw.url, key),
      new Promise<'waited'>((r) => setTimeout(() => r('waited'), 15_000).unref()),
    ])
    t.not(refused, 'waited', 'the refusal came while the lock was still held')
    if (refused !== 'waited') t.equal(refused.ok ? 200 : refused.status, 429)
    await other.query('rollback')
    if (first.ok) first.ws.close()
  },
)
