import { existsSync, mkdirSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Kysely, PostgresDialect, sql, type Dialect } from 'kysely'
import pg from 'pg'
import type { PGlite, PGliteOptions } from '@electric-sql/pglite'
import type { Database } from './schema.js'
import { migrateToLatest } from './migrate.js'
import { copyPgliteTemplate, ensurePgliteTemplate } from './pglite-template.js'
import { LocalNotifications, PgNotifications, type Notifications } from './notifications.js'

/** An open store: the Kysely handle and how to close it. */
export interface Store {
  db: Kysely<Database>
  dialect: 'pglite' | 'pg'
  /** The broadcast channel between the processes on this database (LISTEN/NOTIFY, or in-process). */
  notifications: Notifications
  /** True when the database answers a trivial query. */
  ping(): Promise<boolean>
  close(): Promise<void>
}

/** Where the store lives: a server (`databaseUrl`) or an embedded PGlite directory (`dataDir`). */
export interface StoreOptions {
  databaseUrl?: string | undefined
  dataDir: string
  /** Pool size for the server dialect. */
  poolSize?: number
  /**
   * Folder of PGlite templates (see pglite-template.ts): a new embedded database is copied from the one there
   * instead of running initdb, and the template is made first when it is missing. Unset: PGlite runs initdb.
   */
  pgliteTemplateDir?: string | undefined
  /**
   * An embedded database that is already open, used instead of opening `dataDir`; the store leaves it open when it
   * closes. The tests keep one open per process this way (test/helpers/db.ts): starting PGlite costs ~1 s of CPU.
   */
  pglite?: PGlite | undefined
  /**
   * Postgres's `shared_buffers` of the embedded database, in MB (`PGLITE_SHARED_BUFFERS_MB`); unset: PGlite's own,
   * 128 MB. PGlite zeroes the whole pool in WebAssembly at every start: a start took 0.73-0.95 s of CPU at 128 MB
   * and 0.31-0.35 s at 16 MB on a 2-core machine (docs/reference/configuration.md).
   */
  pgliteSharedBuffersMb?: number | undefined
}

// Postgres int8 (count(*), bigserial) comes back as a string from `pg`; our counts and ids fit in a double.
pg.types.setTypeParser(20, (v: string) => Number(v))

/** True when `dataDir` holds nothing yet: PGlite would run initdb there. */
function isNewDataDir(dataDir: string): boolean {
  if (existsSync(join(dataDir, 'PG_VERSION'))) return false
  return !existsSync(dataDir) || readdirSync(dataDir).length === 0
}

/** `client` with a `close` that does nothing: Kysely's PGlite driver closes its client when the store closes. */
function leftOpen(client: PGlite): PGlite {
  return new Proxy(client, {
    get(target, key) {
      if (key === 'close') return async () => undefined
      const value = Reflect.get(target, key, target) as unknown
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/** PGlite's options for a pool of `sharedBuffersMb` (its default start parameters, plus `shared_buffers`). */
export function pgliteStartOptions(pglite: typeof PGlite, sharedBuffersMb: number | undefined): PGliteOptions {
  if (sharedBuffersMb === undefined) return {}
  return { startParams: [...pglite.defaultStartParams, '-c', `shared_buffers=${sharedBuffersMb}MB`] }
}

async function pgliteDialect(options: StoreOptions): Promise<{ dialect: Dialect }> {
  const { pglite: open, pgliteTemplateDir: templateDir } = options
  const dataDir = `${options.dataDir}/pg`
  if (open !== undefined) {
    const { PGliteDialect } = await import('kysely-pglite-dialect')
    return { dialect: new PGliteDialect(leftOpen(open)) }
  }
  // PGlite is loaded lazily: a server deployment never pays for the WASM module.
  const loading = Promise.all([import('@electric-sql/pglite'), import('kysely-pglite-dialect')])
  // Awaited below; until then a failed import must not count as an unhandled rejection.
  loading.catch(() => undefined)
  if (templateDir !== undefined && isNewDataDir(dataDir)) {
    // Any failure here (a read-only install folder, a full disk) only costs time: PGlite then runs initdb itself.
    try {
      copyPgliteTemplate(await ensurePgliteTemplate(templateDir), dataDir)
    } catch {
      // PGlite makes the database from scratch below.
    }
  }
  const [{ PGlite }, { PGliteDialect }] = await loading
  // PGlite creates only the last folder level itself.
  mkdirSync(dirname(dataDir), { recursive: true })
  const client = await PGlite.create(dataDir, pgliteStartOptions(PGlite, options.pgliteSharedBuffersMb))
  return { dialect: new PGliteDialect(client) }
}

/** How long a new connection to the database server may take. */
const CONNECT_TIMEOUT_MS = 5_000

/** Opens the store and runs pending migrations. */
export async function openStore(options: StoreOptions): Promise<Store> {
  let dialect: Dialect
  let kind: Store['dialect']
  let notifications: Notifications
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      // A server that does not answer (a network cut, not a refused port) fails a query in seconds instead of
      // holding it, and the request behind it, until the kernel gives up.
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
    })
    // An idle client's error (server restart) must not crash the process; queries will report it.
    pool.on('error', () => undefined)
    // Nor a checked-out client's: pg-pool listens only while a client is idle, so a connection the server ends
    // between the statements of a transaction emitted 'error' to nobody and killed the process. The client's
    // next query fails (database unavailable) and the pool drops it when it comes back.
    pool.on('connect', (client) => client.on('error', () => undefined))
    dialect = new PostgresDialect({ pool })
    kind = 'pg'
    notifications = new PgNotifications(pool, options.databaseUrl)
  } else {
    dialect = (await pgliteDialect(options)).dialect
    kind = 'pglite'
    notifications = new LocalNotifications()
  }
  const db = new Kysely<Database>({ dialect })
  try {
    await migrateToLatest(db)
  } catch (e) {
    await db.destroy().catch(() => undefined)
    await notifications.close()
    throw e
  }
  let closed = false
  return {
    db,
    dialect: kind,
    notifications,
    async ping() {
      try {
        await sql`select 1`.execute(db)
        return true
      } catch {
        return false
      }
    },
    async close() {
      if (closed) return
      closed = true
      await notifications.close()
      await db.destroy()
    },
  }
}
