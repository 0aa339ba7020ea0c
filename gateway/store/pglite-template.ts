/**
 * PGlite data directories made once and copied into every new `$DATA_DIR/pg`. PGlite runs `initdb` in WebAssembly
 * when it opens an empty directory (4-5 s and ~800 MB on a quiet 2-core machine, 20-30 s under load), and the first
 * migration adds 0.3-1.5 s more; copying a finished directory costs a fraction of that. `npm install` (the `prepare`
 * script, `bin/build.js`) makes the templates, so the first `npm start` only copies one.
 *
 * Two levels, both under `.cache/pglite`: `initdb-<pglite version>` (the empty cluster, the expensive part) and
 * `migrated-<pglite version>-<hash>` (that plus every migration), where the hash covers the migration files that
 * will run, so a changed migration can never be served from an old template. Another PGlite version may lay out
 * its data directory differently, hence the version in both names.
 */
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Kysely } from 'kysely'
import { MIGRATIONS, migrateToLatest } from './migrate.js'

/** How long a template another process is making may take before its lock counts as abandoned. */
const LOCK_STALE_MS = 180_000

/** The nearest package.json named `name` at or above `dir`, parsed; undefined when there is none. */
function packageAbove(dir: string, name: string): { dir: string; version?: string } | undefined {
  for (;;) {
    const file = join(dir, 'package.json')
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string }
      if (pkg.name === name) return { dir, ...(pkg.version !== undefined && { version: pkg.version }) }
    }
    const up = dirname(dir)
    if (up === dir) return undefined
    dir = up
  }
}

/** Version of the installed `@electric-sql/pglite` (its package.json is not exported, so it is found on disk). */
export function pgliteVersion(): string {
  const pkg = packageAbove(dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')), '@electric-sql/pglite')
  if (pkg?.version === undefined) throw new Error('cannot find the version of @electric-sql/pglite')
  return pkg.version
}

/**
 * Where templates live by default: `.cache/pglite` in the voxgate checkout (the folder holding its package.json),
 * found from this file so sources run by tsx and the compiled `dist/` agree. Undefined when there is none.
 */
export function defaultPgliteTemplateDir(): string | undefined {
  const pkg = packageAbove(dirname(fileURLToPath(import.meta.url)), 'voxgate')
  return pkg === undefined ? undefined : join(pkg.dir, '.cache', 'pglite')
}

/**
 * Hash of the migrations `migrateToLatest` runs, so editing one in place (before a release) also gets a new template:
 * their TypeScript sources in the checkout (the same for the tsx-run sources and the bundle in dist/, so both use one
 * template), or, in an install without sources, each migration's name and code as loaded.
 */
export function migrationsHash(): string {
  const hash = createHash('sha256')
  const pkg = packageAbove(dirname(fileURLToPath(import.meta.url)), 'voxgate')
  const dir = pkg === undefined ? undefined : join(pkg.dir, 'gateway', 'store', 'migrations')
  if (dir !== undefined && existsSync(dir)) {
    for (const file of readdirSync(dir).sort()) {
      if (file.endsWith('.ts') && !file.endsWith('.d.ts')) hash.update(file).update(readFileSync(join(dir, file)))
    }
  } else {
    for (const [name, migration] of Object.entries(MIGRATIONS))
      hash.update(name).update(String(migration.up)).update(String(migration.down))
  }
  return hash.digest('hex').slice(0, 12)
}

/** Path of the migrated template for the installed PGlite and these migrations under `cacheDir` (may not exist yet). */
export function pgliteTemplatePath(cacheDir: string): string {
  return join(cacheDir, `migrated-${pgliteVersion()}-${migrationsHash()}`)
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * Makes `dir` with `make(tmp)` unless it exists (it is complete once `PG_VERSION` is in it). Processes that start
 * together make it once: the others wait on a lock directory (one left by a crashed process is taken over after 3
 * minutes). `make` works in a temporary directory renamed into place, so a half-made template is never used.
 */
async function once(dir: string, make: (tmp: string) => Promise<void>): Promise<string> {
  const lock = `${dir}.lock`
  mkdirSync(dirname(dir), { recursive: true })
  for (;;) {
    if (existsSync(join(dir, 'PG_VERSION'))) return dir
    try {
      mkdirSync(lock)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
      if (age > LOCK_STALE_MS) rmSync(lock, { recursive: true, force: true })
      await sleep(100)
      continue
    }
    try {
      if (existsSync(join(dir, 'PG_VERSION'))) return dir
      const tmp = `${dir}.tmp-${process.pid}`
      rmSync(tmp, { recursive: true, force: true })
      rmSync(dir, { recursive: true, force: true })
      await make(tmp)
      renameSync(tmp, dir)
      return dir
    } finally {
      rmSync(lock, { recursive: true, force: true })
    }
  }
}

/** Removes migrated templates of other migration sets (older code), which nothing will copy again. */
function removeOtherMigratedTemplates(cacheDir: string, keep: string): void {
  for (const name of readdirSync(cacheDir)) {
    const path = join(cacheDir, name)
    if (!name.startsWith('migrated-') || path === keep || name.endsWith('.lock') || name.includes('.tmp-')) continue
    // Only finished ones an hour old: another checkout state may be copying a recent one right now.
    if (Date.now() - statSync(path).mtimeMs > 3_600_000) rmSync(path, { recursive: true, force: true })
  }
}

/**
 * Returns the migrated template under `cacheDir`, making it (and the initdb one below it) first when missing.
 * Costs ~5 s when neither exists, under a second when only the migrations changed, nothing when both exist.
 */
export async function ensurePgliteTemplate(cacheDir: string): Promise<string> {
  const target = pgliteTemplatePath(cacheDir)
  if (existsSync(join(target, 'PG_VERSION'))) return target
  const { PGlite } = await import('@electric-sql/pglite')
  const initdb = await once(join(cacheDir, `initdb-${pgliteVersion()}`), async (tmp) => {
    // PGlite runs initdb into an empty directory; close() shuts Postgres down cleanly (a checkpoint), so every
    // copy opens without crash recovery.
    const pg = await PGlite.create(tmp)
    await pg.close()
  })
  const made = await once(target, async (tmp) => {
    cpSync(initdb, tmp, { recursive: true })
    const { PGliteDialect } = await import('kysely-pglite-dialect')
    const db = new Kysely<unknown>({ dialect: new PGliteDialect(await PGlite.create(tmp)) })
    try {
      await migrateToLatest(db)
    } finally {
      await db.destroy()
    }
  })
  removeOtherMigratedTemplates(cacheDir, made)
  return made
}

/**
 * Fills the new PGlite data directory `dataDir` with a copy of `template`. The copy is made beside it and renamed
 * into place, so a crash midway never leaves a half database that PGlite would try to open.
 */
export function copyPgliteTemplate(template: string, dataDir: string): void {
  mkdirSync(dirname(dataDir), { recursive: true })
  const tmp = `${dataDir}.copy-${process.pid}`
  rmSync(tmp, { recursive: true, force: true })
  cpSync(template, tmp, { recursive: true })
  // An empty directory (made by hand, or by a PGlite that failed before initdb) is replaced; rename cannot.
  if (existsSync(dataDir) && readdirSync(dataDir).length === 0) rmSync(dataDir, { recursive: true })
  renameSync(tmp, dataDir)
}
