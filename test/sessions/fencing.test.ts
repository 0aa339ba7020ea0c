/**
 * Leases that fence, with real processes on one Postgres server: a replica paused (SIGSTOP) past its lease has
 * its sessions swept by the other, which then admits new ones in their place; when the paused replica resumes,
 * its first heartbeat finds the leases gone and ends those sessions, and the limit holds throughout in the
 * database.
 */
import t from 'tap'
import { sql } from 'kysely'
import type WebSocket from 'ws'
import { startTestGateway, type TestGateway } from '../helpers/gateway.js'
import { connectBrowser, type WsResult } from '../helpers/ws-client.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'

const onServer = process.env.DATABASE_URL !== undefined
const LEASE_TTL = 3_000
const LIMIT = 5
/** Racing starts while a replica is paused. */
const MORE = 100

/** Polls `check` until it returns a value; fails the test (instead of hanging) after `limitMs`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, limitMs = LEASE_TTL * 6): Promise<T> {
  const deadline = Date.now() + limitMs
  for (;;) {
    const v = await check()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`not reached: ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** The database's count of an organization's live sessions: the number admission decides with. */
async function liveSessions(gw: TestGateway, organizationId: string): Promise<number> {
  const row = await gw.store.db
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', organizationId)
    .where('status', '=', 'connected')
    .where('lease_expires_at', '>', sql<Date>`now()`)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

t.test(
  'a replica paused past its lease ends its swept sessions when it resumes; the limit holds',
  { skip: !onServer && 'needs DATABASE_URL: two gateway processes share one Postgres server' },
  async (t) => {
    const gw = await startTestGateway({ LEASE_TTL_MS: String(LEASE_TTL) })
    t.teardown(() => gw.close())
    const paused = await spawnGateway({ DATABASE_URL: gw.db.options.databaseUrl!, LEASE_TTL_MS: String(LEASE_TTL), ADMIN_TOKEN: '' })
    t.teardown(() => paused.kill('SIGKILL'))
    const org = (
      await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'fenced', max_concurrent_sessions: LIMIT } })
    ).body
    const agent = (await gw.request('POST', '/v1/agents', { key: org.api_key, body: {} })).body
    const authorize = async () =>
      (await gw.request('POST', '/v1/agents/web/authorize_session', { key: org.api_key, body: { agent_id: agent.id } })).body
        .client_session_key as string

    // The database's count of live sessions, sampled all along: the number admission decides with.
    let maxLive = 0
    let sampling = true
    const liveNow = () => liveSessions(gw, org.id)
    const sampler = (async () => {
      while (sampling) {
        maxLive = Math.max(maxLive, await liveNow())
        await new Promise((r) => setTimeout(r, 25))
      }
    })()
    const open = new Set<WebSocket>()
    const track = (r: WsResult) => {
      if (r.ok) {
        open.add(r.ws)
        r.ws.once('close', () => open.delete(r.ws))
      }
      return r
    }

    // Three sessions on the replica that will be paused, then 17 racing starts over both replicas.
    const onPaused: WebSocket[] = []
    for (let i = 0; i < 3; i++) {
      const r = track(await connectBrowser(paused.url, await authorize()))
      t.ok(r.ok, `session ${i + 1} on the replica to pause`)
      if (r.ok) onPaused.push(r.ws)
    }
    const keys = await Promise.all(Array.from({ length: 17 }, () => authorize()))
    const refusalMs: number[] = []
    const first = await Promise.all(
      keys.map(async (k, i) => {
        const started = Date.now()
        const r = track(await connectBrowser(i % 2 ? paused.url : gw.url, k))
        if (!r.ok) refusalMs.push(Date.now() - started)
        return r
      }),
    )
    // A figure for the docs, not an assertion: timings belong to bench/.
    t.comment(`refusals in the race answered in ${Math.min(...refusalMs)}-${Math.max(...refusalMs)} ms`)
    t.equal(first.filter((r) => r.ok).length, LIMIT - 3, 'the race filled the limit exactly')
    t.ok(
      first.every((r) => r.ok || r.status === 429),
      'the others were refused with 429',
    )
    t.equal(open.size, LIMIT, `${LIMIT} sockets open`)

    // Pause one replica past its lease: the other sweeps its sessions and may admit new ones.
    paused.proc.kill('SIGSTOP')
    await until('the paused replica swept', async () => {
      const rows = await gw.store.db
        .selectFrom('sessions')
        .select(['end_reason'])
        .where('organization_id', '=', org.id)
        .where('lease_owner', '!=', gw.gateway.sessions.keeper.owner)
        .where('status', '=', 'ended')
        .where('end_reason', '=', 'lease_expired')
        .execute()
      return rows.length >= 3 ? rows : undefined
    })
    const freed = LIMIT - (await liveNow())
    t.ok(freed >= 3, `${freed} slots freed by the sweep`)
    // 100 more racing starts while it is paused, half to each: those sent to it wait for it to resume.
    const more = await Promise.all(Array.from({ length: MORE }, () => authorize()))
    const sentToPaused = more.filter((_, i) => i % 2 === 1)
    const warmRefusalMs: number[] = []
    const atActive = await Promise.all(
      more
        .filter((_, i) => i % 2 === 0)
        .map(async (k) => {
          const started = Date.now()
          const r = track(await connectBrowser(gw.url, k))
          if (!r.ok) warmRefusalMs.push(Date.now() - started)
          return r
        }),
    )
    t.comment(`refusals by the warm replica answered in ${Math.min(...warmRefusalMs)}-${Math.max(...warmRefusalMs)} ms`)
    t.equal(atActive.filter((r) => r.ok).length, Math.min(freed, MORE / 2), 'the active replica took the freed slots')

    // Resumed, its heartbeat finds the leases gone and ends those sessions; what it was sent meanwhile is refused.
    const fenced = Promise.all(
      onPaused.map((ws) => new Promise<void>((r) => (ws.readyState === ws.CLOSED ? r() : ws.once('close', () => r())))),
    )
    const late = Promise.all(sentToPaused.map(async (k) => track(await connectBrowser(paused.url, k))))
    paused.proc.kill('SIGCONT')
    await Promise.race([
      fenced,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error('the resumed replica kept its swept sessions open')), LEASE_TTL * 4).unref(),
      ),
    ])
    t.pass('the resumed replica closed every session whose lease it had lost')
    const lateResults = await late
    t.equal(lateResults.filter((r) => r.ok).length, Math.max(0, freed - MORE / 2), 'starts sent to the paused replica found the limit full')
    const rows = await gw.store.db
      .selectFrom('sessions')
      .select(['end_reason'])
      .where('organization_id', '=', org.id)
      .where('lease_owner', '!=', gw.gateway.sessions.keeper.owner)
      .where('status', '=', 'ended')
      .execute()
    t.ok(
      rows.every((r) => r.end_reason === 'lease_expired'),
      'the paused sessions ended as lease_expired',
    )
    sampling = false
    await sampler
    t.ok(maxLive <= LIMIT, `never more than ${LIMIT} live in the database (max ${maxLive})`)
    t.equal(await liveNow(), LIMIT, `${LIMIT} live at the end`)
    t.equal(open.size, LIMIT, `${LIMIT} sockets open at the end`)
    for (const ws of open) ws.close()
  },
)

t.test(
  '100 simultaneous starts over three replicas: exactly the limit is admitted, the rest refused at once',
  { skip: !onServer && 'needs DATABASE_URL: three gateway processes share one Postgres server' },
  async (t) => {
    const BIG_LIMIT = 10
    const gw = await startTestGateway({ LEASE_TTL_MS: String(LEASE_TTL) })
    t.teardown(() => gw.close())
    const env = { DATABASE_URL: gw.db.options.databaseUrl as string, LEASE_TTL_MS: String(LEASE_TTL), ADMIN_TOKEN: '' }
    const children = [await spawnGateway(env), await spawnGateway(env)]
    t.teardown(() => Promise.all(children.map((c) => c.kill('SIGKILL'))))
    const replicas = [gw.url, ...children.map((c) => c.url)]
    const org = (
      await gw.request('POST', '/admin/v1/organizations', {
        admin: true,
        // 100 authorizations at once are this test's load, not a flood: the rate limit is raised out of the way.
        body: { name: 'hundred', max_concurrent_sessions: BIG_LIMIT, limits: { authorize_session: { per_second: 1000, burst: 1000 } } },
      })
    ).body
    const agent = (await gw.request('POST', '/v1/agents', { key: org.api_key, body: {} })).body
    const keys = await Promise.all(
      Array.from({ length: 100 }, async () => {
        const r = await gw.request('POST', '/v1/agents/web/authorize_session', { key: org.api_key, body: { agent_id: agent.id } })
        return r.body.client_session_key as string
      }),
    )
    let maxLive = 0
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        maxLive = Math.max(maxLive, await liveSessions(gw, org.id))
        await new Promise((r) => setTimeout(r, 25))
      }
    })()
    const results = await Promise.all(keys.map((k, i) => connectBrowser(replicas[i % replicas.length] as string, k)))
    sampling = false
    await sampler
    const admitted = results.filter((r) => r.ok)
    t.equal(admitted.length, BIG_LIMIT, `exactly ${BIG_LIMIT} of 100 admitted`)
    t.ok(
      results.every((r) => r.ok || r.status === 429),
      'the other 90 refused with 429',
    )
    t.ok(maxLive <= BIG_LIMIT, `never more than ${BIG_LIMIT} live in the database (max ${maxLive})`)
    for (const r of admitted) if (r.ok) r.ws.close()
  },
)
