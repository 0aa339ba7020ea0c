/**
 * A real database per test file: with DATABASE_URL set, a fresh database on that server (dropped at the end);
 * otherwise an embedded PGlite copied from a migrated template directory, because creating a PGlite database
 * costs seconds and ~800 MB (STACK-NOTES), while copying a prepared one is cheap.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { createHash, randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { openStore, type Store } from '../../gateway/store/database.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

function migrationsHash(): string {
  const dir = join(root, 'gateway', 'store', 'migrations')
  const h = createHash('sha256')
  for (const f of readdirSync(dir).sort()) h.update(f).update(readFileSync(join(dir, f)))
  return h.digest('hex').slice(0, 12)
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms))
}

/** Path of a migrated PGlite template, created once per migration set under a directory lock. */
async function pgliteTemplate(): Promise<string> {
  const base = join(root, '.tap', 'db')
  mkdirSync(base, { recursive: true })
  const dir = join(base, `pglite-${migrationsHash()}`)
  const lock = `${dir}.lock`
  for (let i = 0; i < 600; i++) {
    if (existsSync(dir)) return dir
    try {
      mkdirSync(lock)
    } catch {
      await sleep(100)
      continue
    }
    try {
      const tmp = `${dir}.tmp-${process.pid}`
      rmSync(tmp, { recursive: true, force: true })
      const store = await openStore({ dataDir: tmp })
      await store.close()
      renameSync(tmp, dir)
      return dir
    } finally {
      rmSync(lock, { recursive: true, force: true })
    }
  }
  throw new Error('timed out waiting for the PGlite template')
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
