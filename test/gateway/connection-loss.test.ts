/**
 * A database server that ends a connection the gateway holds between two statements (a restart, an operator's
 * pg_terminate_backend, a dropped database) must fail that work, not the process. node-postgres emits 'error' on
 * a client that has no query running; pg-pool listens only while the client is idle in the pool, so a client
 * checked out for a transaction had nobody listening, and the process died of an unhandled 'error' event.
 */
import t from 'tap'
import { sql } from 'kysely'
import { testDb } from '../helpers/db.js'
import { isDatabaseUnavailable } from '../../gateway/store/database-errors.js'

const onServer = process.env.DATABASE_URL !== undefined

t.test(
  'a connection ended between the statements of a transaction fails the transaction, not the process',
  { skip: !onServer && 'needs the PostgreSQL server (DATABASE_URL)' },
  async (t) => {
    const db = await testDb()
    t.teardown(() => db.cleanup())
    const store = db.store.db

    let gotPid!: (pid: number) => void
    const pid = new Promise<number>((r) => (gotPid = r))
    let goOn!: () => void
    const terminated = new Promise<void>((r) => (goOn = r))
    const transaction = store.transaction().execute(async (trx) => {
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)
      gotPid(rows[0]!.pid)
      // Between two statements: the client is checked out and runs no query.
      await terminated
      await sql`select 1`.execute(trx)
    })
    const failed = transaction.then(
      () => undefined,
      (e: unknown) => e,
    )

    const ended = await sql<{ ok: boolean }>`select pg_terminate_backend(${await pid}) as ok`.execute(store)
    t.equal(ended.rows[0]?.ok, true, 'the server ended the transaction’s connection')
    // The client hears the server's goodbye (57P01) while idle in the transaction.
    await new Promise((r) => setTimeout(r, 500))
    goOn()

    const e = await failed
    t.ok(e instanceof Error, 'the transaction failed')
    t.ok(isDatabaseUnavailable(e), `as "database unavailable" (worth a retry and a 503): ${e instanceof Error ? e.message : String(e)}`)
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(store)
    t.equal(rows[0]?.one, 1, 'and the pool goes on with a fresh connection')
  },
)
