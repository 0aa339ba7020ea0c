/**
 * `voxgate serve --workers N` as a real process tree on one Postgres server: every worker a full replica on one
 * port, a worker that dies is replaced and its calls end as a crashed replica's do, SIGTERM drains them all.
 */
import { get } from 'node:http'
import t from 'tap'
import { testDb } from '../helpers/db.js'
import { ADMIN_TOKEN } from '../helpers/gateway.js'
import { spawnServe } from '../helpers/spawn-serve.js'
import { connectBrowser } from '../helpers/ws-client.js'

const onServer = process.env.DATABASE_URL !== undefined
// A real process tree (tsx compiles each worker, a replacement included): slow on a busy machine.
t.setTimeout(300_000)
const LEASE_TTL = 3_000

/** GET `url` on a connection of its own (the primary hands each connection to a worker in turn). */
function scrape(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => (text += d))
      res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`${res.statusCode}: ${text}`))))
    }).on('error', reject)
  })
}

/** Polls `check` until it returns a value; fails (instead of hanging) after `limitMs`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, limitMs = 60_000): Promise<T> {
  const deadline = Date.now() + limitMs
  for (;;) {
    const v = await check()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`not reached: ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

t.test(
  'two workers serve one port; a killed worker is replaced and its calls end as lease_expired',
  { skip: !onServer && 'needs DATABASE_URL: workers share a Postgres server', timeout: 240_000 },
  async (t) => {
    const db = await testDb()
    t.teardown(() => db.cleanup())
    const g = await spawnServe(
      {
        DATABASE_URL: db.options.databaseUrl!,
        WORKERS: '2',
        LEASE_TTL_MS: String(LEASE_TTL),
        SHUTDOWN_GRACE_MS: '1000',
        ADMIN_TOKEN,
      },
      // A primary started without the gateway's Node options still gives them to its workers.
      { nodeOptions: [] },
    )
    t.teardown(() => g.proc.kill('SIGKILL'))
    const call = async (path: string, key: string, body: unknown) => {
      const r = await fetch(g.url + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      return (await r.json()) as any
    }
    const org = await call('/admin/v1/organizations', ADMIN_TOKEN, { name: 'workers' })
    const agent = await call('/v1/agents', org.api_key, {})
    const open = async () => {
      const key = (await call('/v1/agents/web/authorize_session', org.api_key, { agent_id: agent.id })).client_session_key
      const r = await connectBrowser(g.url, key)
      if (!r.ok) throw new Error(`refused: ${r.status}`)
      return r.ws
    }
    const owners = async () =>
      (
        await db.store.db
          .selectFrom('sessions')
          .select(['id', 'lease_owner', 'status', 'end_reason'])
          .where('organization_id', '=', org.id)
          .where('lease_owner', 'is not', null)
          .execute()
      ).map((r) => ({ ...r, pid: Number(String(r.lease_owner).split(':').at(-2)) }))

    // spawnServe returns once the port answers, i.e. once one worker listens: wait for both, or every session
    // may land on the first.
    const listening = () =>
      g
        .stdout()
        .split('\n')
        .filter((l) => l.includes('voxgate listening')).length
    for (const deadline = Date.now() + 30_000; listening() < 2 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50))
    t.equal(listening(), 2, 'both workers listen')
    t.notMatch(g.stdout(), /started without the gateway's options/, 'the workers run with the gateway options')
    const sockets = []
    for (let i = 0; i < 6; i++) sockets.push(await open())
    const first = await owners()
    const pids = [...new Set(first.map((r) => r.pid))]
    t.equal(pids.length, 2, 'sessions landed on both workers')
    t.ok(
      pids.every((p) => p !== g.proc.pid),
      'served by workers, not by the primary',
    )

    // Whichever worker takes a scrape, it reports the whole machine: the 6 sessions of both workers.
    const seen = []
    for (let i = 0; i < 4; i++) {
      const text = await scrape(`${g.url}/metrics`)
      seen.push(/^voxgate_live_sessions\{channel="browser"\} (\d+)$/m.exec(text)?.[1])
    }
    t.same(seen, ['6', '6', '6', '6'], 'each scrape sums the live sessions of both workers')

    const victim = pids[0]!
    const victimSessions = first.filter((r) => r.pid === victim).map((r) => r.id)
    process.kill(victim, 'SIGKILL')
    const ended = await until('the killed worker’s sessions ended', async () => {
      const rows = (await owners()).filter((r) => victimSessions.includes(r.id))
      return rows.every((r) => r.status === 'ended') ? rows : undefined
    })
    t.ok(
      ended.every((r) => r.end_reason === 'lease_expired'),
      'ended by the surviving worker as lease_expired',
    )
    const replacement = await until('a replacement worker serves', async () => {
      // A probe session: kept if a new worker took it, closed otherwise (the organization's limit is 50).
      const probe = await open()
      const fresh = (await owners()).find((r) => !pids.includes(r.pid) && r.status === 'connected')
      if (fresh === undefined) {
        probe.close()
        await new Promise((r) => setTimeout(r, 400))
      } else sockets.push(probe)
      return fresh?.pid
    })
    t.ok(replacement, `worker ${victim} was replaced by ${replacement}`)

    g.proc.kill('SIGTERM')
    t.same(await g.exited, { code: 0, signal: null }, 'the primary drained its workers and exited')
    const left = (await owners()).filter((r) => r.status !== 'ended')
    t.same(left, [], 'no session left connected')
    for (const ws of sockets) ws.terminate()
  },
)

t.test(
  'closed stdout, a live session: SIGTERM to the primary and the worker (a process group) drains, a second one: all exit',
  { skip: !onServer && 'needs DATABASE_URL: workers share a Postgres server', timeout: 240_000 },
  async (t) => {
    const db = await testDb()
    t.teardown(() => db.cleanup())
    const g = await spawnServe(
      { DATABASE_URL: db.options.databaseUrl!, WORKERS: '2', SHUTDOWN_GRACE_MS: '600000', LOG_LEVEL: 'trace', ADMIN_TOKEN },
      { closedStdout: true },
    )
    t.teardown(() => g.proc.kill('SIGKILL'))
    const call = async (path: string, key: string, body: unknown) => {
      const r = await fetch(g.url + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      return (await r.json()) as any
    }
    const org = await call('/admin/v1/organizations', ADMIN_TOKEN, { name: 'workers-epipe' })
    const agent = await call('/v1/agents', org.api_key, {})
    const key = (await call('/v1/agents/web/authorize_session', org.api_key, { agent_id: agent.id })).client_session_key
    const live = await connectBrowser(g.url, key)
    t.ok(live.ok, 'a live session')
    const owner = await until('the session has a lease', async () => {
      const row = await db.store.db
        .selectFrom('sessions')
        .select('lease_owner')
        .where('organization_id', '=', org.id)
        .where('lease_owner', 'is not', null)
        .executeTakeFirst()
      return row ? Number(String(row.lease_owner).split(':').at(-2)) : undefined
    })
    const sentAt = Date.now()
    g.proc.kill('SIGTERM')
    process.kill(owner, 'SIGTERM')
    await until('draining', async () =>
      (await fetch(`${g.url}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) === 200
        ? undefined
        : true,
    )
    // The worker heard the signal twice (its own, the primary's drain), in either order: one drain, not an exit.
    await new Promise((r) => setTimeout(r, 500))
    t.equal(g.proc.exitCode, null, 'one group SIGTERM drains: the gateway still runs')
    if (live.ok) t.equal(live.ws.readyState, live.ws.OPEN, 'and the live session goes on')
    g.proc.kill('SIGTERM')
    const hung = setTimeout(() => g.proc.kill('SIGKILL'), 60_000)
    const e = await g.exited
    clearTimeout(hung)
    t.same(e, { code: 1, signal: null }, `the primary and its workers exited at once (${Date.now() - sentAt} ms)`)
    const alive = (() => {
      try {
        process.kill(owner, 0)
        return true
      } catch {
        return false
      }
    })()
    t.notOk(alive, 'the worker is gone too')
    if (live.ok) live.ws.terminate()
  },
)
