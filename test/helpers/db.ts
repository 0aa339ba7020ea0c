/**
 * A real database per test file: with DATABASE_URL set, a fresh database on that server (dropped at the end),
 * created from a migrated template database (`CREATE DATABASE ... TEMPLATE`: ~0.1 s instead of ~1 s of migrations
 * per file); otherwise an embedded PGlite copied from the migrated template `npm start` uses too, because creating a
 * PGlite database costs seconds and ~800 MB (STACK-NOTES), while copying a prepared one is cheap.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { openStore, type Store } from '../../gateway/store/database.js'
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
  const dataDir = mkdtempSync(join(tmpdir(), 'voxgate-test-'))
  if (serverUrl) {
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
  cpSync(await pgliteTemplate(), join(dataDir, 'pg'), { recursive: true })
  const options = { dataDir }
  const handle: TestDb = {
    store: await openStore(options),
    options,
    reopen: () => openStore(options),
    async cleanup() {
      await handle.store.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
  return handle
}
