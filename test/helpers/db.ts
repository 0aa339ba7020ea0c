/**
 * A real database per test file: with DATABASE_URL set, a fresh database on that server (dropped at the end);
 * otherwise an embedded PGlite copied from the migrated template `npm start` uses too, because creating a PGlite
 * database costs seconds and ~800 MB (STACK-NOTES), while copying a prepared one is cheap.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { openStore, type Store } from '../../gateway/store/database.js'
import { defaultPgliteTemplateDir, ensurePgliteTemplate } from '../../gateway/store/pglite-template.js'

/** The migrated PGlite template of the running code (made once, shared with `npm start`; see pglite-template.ts). */
async function pgliteTemplate(): Promise<string> {
  const cacheDir = defaultPgliteTemplateDir()
  if (cacheDir === undefined) throw new Error('no voxgate checkout above test/helpers')
  return ensurePgliteTemplate(cacheDir)
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

/** Opens a fresh, migrated database for this test file. */
export async function testDb(): Promise<TestDb> {
  const serverUrl = process.env.DATABASE_URL
  const dataDir = mkdtempSync(join(tmpdir(), 'voxgate-test-'))
  if (serverUrl) {
    const name = `voxgate_test_${process.pid}_${randomBytes(4).toString('hex')}`
    const admin = new pg.Client({ connectionString: serverUrl })
    await admin.connect()
    await admin.query(`create database ${name}`)
    await admin.end()
    const url = new URL(serverUrl)
    url.pathname = `/${name}`
    const options = { databaseUrl: url.toString(), dataDir }
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
