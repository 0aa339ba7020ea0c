// bin/test.js picks the files the PostgreSQL half of CI runs (`--database`) from a list: this holds the list to its
// rule, so a new test of the store, of replicas or of the API's queries cannot miss the server half.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const root = fileURLToPath(new URL('../../', import.meta.url))
const list = (...args: string[]) =>
  execFileSync(process.execPath, ['bin/test.js', '--list', ...args], { cwd: root, encoding: 'utf8' })
    .trim()
    .split('\n')

const all = list()
const database = list('--database')

t.ok(all.length > 100, `every test file is found (${all.length})`)
t.ok(all.includes('test/architecture/test-runner.test.ts'), 'this file among them')
t.ok(all.includes('client/test/units.test.ts'), 'client tests among them')
t.notOk(
  all.some((f) => /\/(fakes|fixtures|helpers)\//.test(f)),
  'no fake, fixture or helper is run as a test file',
)
t.ok(database.length > 10 && database.length < all.length / 2, `the database suite is a part (${database.length} files)`)
t.ok(
  database.every((f) => all.includes(f)),
  'the database suite is made of test files',
)

t.test('a file that uses the store, the test database or DATABASE_URL is in the database suite', async (t) => {
  const rule = /from '(\.\.\/)+(helpers\/db|gateway\/store\/[\w-]+)\.js'|process\.env\.DATABASE_URL/
  const found = all.filter((f) => rule.test(readFileSync(`${root}${f}`, 'utf8')))
  const missing = found.filter((f) => !database.includes(f))
  t.same(missing, [], 'add them to DATABASE_SUITE in bin/test.js')
  t.ok(found.length >= 20, `the rule finds such files (${found.length})`)
})

t.test('the runner says so when nothing matches', async (t) => {
  let err = ''
  try {
    execFileSync(process.execPath, ['bin/test.js', '--list', 'test/no-such-folder'], { cwd: root, encoding: 'utf8', stdio: 'pipe' })
  } catch (e) {
    err = String((e as { stderr?: string }).stderr)
  }
  t.match(err, /no test files match test\/no-such-folder/)
})

t.test('naming a folder runs the files in it', async (t) => {
  const some = list('test/architecture')
  t.ok(some.length >= 2 && some.every((f) => f.startsWith('test/architecture/')), some.join(', '))
})

t.test('short unit files sharing a process run the same tests as each alone', async (t) => {
  // Three short unit files, which share a process by default (bin/test-groups.js).
  const files = ['test/config/bounds.test.ts', 'test/config/plugins-order.test.ts', 'test/config/webhook-url.test.ts']
  // Times of their own, as short busy files have (not this checkout's last run, which a loaded machine stretches).
  const dir = mkdtempSync(join(tmpdir(), 'test-runner-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const timesFile = join(dir, 'times.json')
  const writeTimes = () => writeFileSync(timesFile, JSON.stringify(Object.fromEntries(files.map((f) => [f, { wallMs: 400, cpuMs: 400 }]))))
  const run = (...args: string[]) => {
    writeTimes()
    return execFileSync(process.execPath, ['bin/test.js', ...args, ...files], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, VOXGATE_TEST_TIMES: timesFile },
    })
  }
  const counts = (out: string) => /^# (\d+) files, (\d+) tests: (\d+) pass, 0 fail/m.exec(out)?.slice(1)
  const grouped = run()
  const alone = run('--alone')
  const shared = /(\d+) short unit files share (\d+) processes/.exec(grouped)
  t.ok(shared !== null && Number(shared[1]) > Number(shared[2]), `files shared processes: ${shared?.[0]}`)
  t.match(alone, /0 short unit files share 0 processes/)
  t.ok(counts(grouped) !== undefined, 'the grouped run passed')
  t.same(counts(grouped), counts(alone), 'the same files, tests and passes either way')
})
