/**
 * A real database per test file: with DATABASE_URL set, a fresh database on that server (dropped at the end),
 * created from a migrated template database (`CREATE DATABASE ... TEMPLATE`: ~0.1 s instead of ~1 s of migrations
 * per file); otherwise an embedded PGlite copied from the migrated template `npm start` uses too, because creating a
 * PGlite database costs seconds and ~800 MB (STACK-NOTES), while copying a prepared one is cheap.
 *
 * Starting PGlite on a copy still costs ~1 s of CPU, and many test files start several gateways one after another,
 * so an embedded database a test has finished with stays open in this process, is emptied back to the migrated
 * template's state (every table truncated, identities restarted, advisory locks released) and is what the next
 * `testDb()` of this process gets. A test that needs a real restart has `reopen()`.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { PGlite } from '@electric-sql/pglite'
import { openStore, pgliteStartOptions, type Store } from '../../gateway/store/database.js'
import { defaultPgliteTemplateDir, ensurePgliteTemplate, migrationsHash } from '../../gateway/store/pglite-template.js'

/** The migrated PGlite template of the running code (made once, shared with `npm start`; see pglite-template.ts). */
async function pgliteTemplate(): Promise<string> {
  const cacheDir = defaultPgliteTemplateDir()
  if (cacheDir === undefined) throw new Error('no voxgate checkout above test/helpers')
  return ensurePgliteTemplate(cacheDir)
}

/** Any number, the same in every test process: the advisory lock that makes one of them create the template. */
const TEMPLATE_LOCK = 7_461_023

function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}

/**
 * The server's migrated template database for these migrations, made once by whichever test process gets there
 * first (the others wait on an advisory lock). It is renamed into place only once migrated and closed, so a copy
 * never sees half a schema, and nothing stays connected to it (Postgres copies only an unused template).
 */
async function serverTemplate(admin: pg.Client, serverUrl: string, dataDir: string): Promise<string> {
  const name = `voxgate_test_template_${migrationsHash()}`
  await admin.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK])
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [name])
    if (found.rowCount === 0) {
      const making = `${name}_making`
      await admin.query(`drop database if exists ${making} with (force)`)
      await admin.query(`create database ${making}`)
      const store = await openStore({ databaseUrl: databaseUrl(serverUrl, making), dataDir })
      await store.close()
      await admin.query(`alter database ${making} rename to ${name}`)
    }
  } finally {
    await admin.query('select pg_advisory_unlock($1)', [TEMPLATE_LOCK])
  }
  return name
}

/** A test database handle: the store, the settings to open it again (restart tests), and cleanup. */
export interface TestDb {
  store: Store
  /** Options that reopen the same database (e.g. to simulate a restart or a second process). */
  options: { databaseUrl?: string; dataDir: string }
  /** Opens another store on the same database. */
  reopen(): Promise<Store>
  cleanup(): Promise<void>
}

/**
 * Opens a fresh, migrated database for this test file: on `serverUrl` (default DATABASE_URL) when there is one,
 * else an embedded PGlite.
 */
export async function testDb(serverUrl = process.env.DATABASE_URL): Promise<TestDb> {
  if (serverUrl) {
    const dataDir = mkdtempSync(join(tmpdir(), 'voxgate-test-'))
    const name = `voxgate_test_${process.pid}_${randomBytes(4).toString('hex')}`
    const admin = new pg.Client({ connectionString: serverUrl })
    await admin.connect()
    try {
      await admin.query(`create database ${name} template ${await serverTemplate(admin, serverUrl, dataDir)}`)
    } finally {
      await admin.end()
    }
    const options = { databaseUrl: databaseUrl(serverUrl, name), dataDir }
    const handle: TestDb = {
      store: await openStore(options),
      options,
      reopen: () => openStore(options),
      async cleanup() {
        await handle.store.close()
        const c = new pg.Client({ connectionString: serverUrl })
        await c.connect()
        await c.query(`drop database if exists ${name} with (force)`)
        await c.end()
        rmSync(dataDir, { recursive: true, force: true })
      },
    }
    return handle
  }
  let embedded = idle.pop() ?? (await openEmbedded())
  const options = { dataDir: embedded.dataDir }
  let released = false
  const handle: TestDb = {
    store: await openStore({ ...options, pglite: embedded.client }),
    options,
    async reopen() {
      // A real restart: PGlite closes and starts again on the same files.
      await embedded.client.close()
      embedded = { client: await PGlite.create(join(embedded.dataDir, 'pg'), START_OPTIONS), dataDir: embedded.dataDir }
      return openStore({ ...options, pglite: embedded.client })
    },
    async cleanup() {
      if (released) return
      released = true
      await handle.store.close()
      try {
        await resetEmbedded(embedded.client)
        giveBack(embedded)
      } catch {
        await embedded.client.close().catch(() => undefined)
        rmSync(embedded.dataDir, { recursive: true, force: true })
      }
    },
  }
  return handle
}

/**
 * The tests' embedded Postgres has 16 MB of shared buffers (bin/test.js sets PGLITE_SHARED_BUFFERS_MB for the
 * gateways tests start too): PGlite zeroes the pool at every start, ~0.5 s of CPU for its default 128 MB on this
 * 2-core machine, and no test's data comes near 16 MB.
 */
const START_OPTIONS = pgliteStartOptions(PGlite, Number(process.env.PGLITE_SHARED_BUFFERS_MB ?? 16))

/** An open embedded database and the folder that holds it (`<dataDir>/pg`). */
interface Embedded {
  client: PGlite
  dataDir: string
}

/** This process's embedded databases that no test holds, each as the migrated template left it. */
const idle: Embedded[] = []
/**
 * How long a database nobody holds stays open for the next test. An open PGlite keeps the process alive (Postgres
 * arms a ~10 s statistics timer after each transaction), so one left open would hold every test file's exit up
 * by seconds; the next test of a file asks for its database well within this.
 */
const IDLE_CLOSE_MS = 500

function giveBack(embedded: Embedded): void {
  idle.push(embedded)
  setTimeout(() => {
    const at = idle.indexOf(embedded)
    if (at < 0) return
    idle.splice(at, 1)
    void embedded.client.close().catch(() => undefined)
  }, IDLE_CLOSE_MS).unref()
}
const made: string[] = []
process.once('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

async function openEmbedded(): Promise<Embedded> {
  const dataDir = mkdtempSync(join(tmpdir(), 'voxgate-test-'))
  made.push(dataDir)
  cpSync(await pgliteTemplate(), join(dataDir, 'pg'), { recursive: true })
  return { client: await PGlite.create(join(dataDir, 'pg'), START_OPTIONS), dataDir }
}

/** Empties every table but the migrator's, restarts identities and drops session state a test left behind. */
async function resetEmbedded(client: PGlite): Promise<void> {
  if (client.closed) throw new Error('closed')
  const tables = await client.query<{ name: string }>(
    "select quote_ident(tablename) as name from pg_tables where schemaname = 'public' and tablename not like 'kysely_migration%'",
  )
  const names = tables.rows.map((r) => r.name)
  await client.exec(`select pg_advisory_unlock_all(); truncate ${names.join(', ')} restart identity cascade;`)
}
