import t from 'tap'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { openStore } from '../../gateway/store/database.js'
import { createOrganization, countOrganizations } from '../../gateway/store/organizations.js'
import { defaultPgliteTemplateDir, ensurePgliteTemplate, pgliteTemplatePath, pgliteVersion } from '../../gateway/store/pglite-template.js'

// The shared template (made by `npm install`, or here once): every test below copies it, none runs initdb.
const cacheDir = defaultPgliteTemplateDir()!
const template = await ensurePgliteTemplate(cacheDir)
const scratch = mkdtempSync(join(tmpdir(), 'voxgate-template-test-'))
t.teardown(() => rmSync(scratch, { recursive: true, force: true }))

t.test('the template lives in the checkout, keyed by PGlite version and migrations, and is migrated', async (t) => {
  t.ok(cacheDir.endsWith(join('.cache', 'pglite')))
  t.equal(template, pgliteTemplatePath(cacheDir))
  t.match(template, new RegExp(`migrated-${pgliteVersion().replaceAll('.', '\\.')}-[0-9a-f]{12}$`))
  t.ok(existsSync(join(template, 'PG_VERSION')))
  t.notOk(existsSync(join(template, 'postmaster.pid')), 'shut down cleanly: copies open without recovery')
})

t.test('a new data directory is copied from the template', async (t) => {
  const dataDir = join(scratch, 'new')
  const store = await openStore({ dataDir, pgliteTemplateDir: cacheDir })
  t.teardown(() => store.close())
  t.ok(existsSync(join(dataDir, 'pg', 'PG_VERSION')))
  t.equal(await countOrganizations(store.db), 0, 'the schema came with the copy')
  t.same(
    readdirSync(dataDir).filter((f) => f !== 'pg'),
    [],
    'no copy left beside it',
  )
})

t.test("pgliteSharedBuffersMb sets the embedded Postgres's shared_buffers; unset leaves PGlite's 128 MB", async (t) => {
  const shown = async (dataDir: string, mb: number | undefined) => {
    const store = await openStore({ dataDir, pgliteTemplateDir: cacheDir, pgliteSharedBuffersMb: mb })
    try {
      const r = await sql<{ shared_buffers: string }>`show shared_buffers`.execute(store.db)
      return r.rows[0]?.shared_buffers
    } finally {
      await store.close()
    }
  }
  t.equal(await shown(join(scratch, 'buffers-16'), 16), '16MB')
  t.equal(await shown(join(scratch, 'buffers-default'), undefined), '128MB')
})

t.test('an existing database is opened, never replaced by the template', async (t) => {
  const dataDir = join(scratch, 'existing')
  const first = await openStore({ dataDir, pgliteTemplateDir: cacheDir })
  await createOrganization(first.db, { name: 'kept' })
  await first.close()
  const again = await openStore({ dataDir, pgliteTemplateDir: cacheDir })
  t.teardown(() => again.close())
  t.equal(await countOrganizations(again.db), 1)
})

t.test('an empty data directory made beforehand is filled from the template', async (t) => {
  const dataDir = join(scratch, 'empty')
  mkdirSync(join(dataDir, 'pg'), { recursive: true })
  const store = await openStore({ dataDir, pgliteTemplateDir: cacheDir })
  t.teardown(() => store.close())
  t.equal(await countOrganizations(store.db), 0)
})

t.test('a process making the template holds a lock the others wait on', async (t) => {
  const otherCache = join(scratch, 'cache')
  mkdirSync(otherCache)
  const target = pgliteTemplatePath(otherCache)
  // Only the last step is left to wait for: the initdb level is there already.
  const initdb = `initdb-${pgliteVersion()}`
  cpSync(join(cacheDir, initdb), join(otherCache, initdb), { recursive: true })
  mkdirSync(`${target}.lock`)
  let done = false
  const waiting = ensurePgliteTemplate(otherCache).then((dir) => {
    done = true
    return dir
  })
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.notOk(done, 'waits while the lock is held')
  // The "other process" finishes: its template appears and its lock goes.
  cpSync(template, target, { recursive: true })
  rmSync(`${target}.lock`, { recursive: true })
  t.equal(await waiting, target)
})
