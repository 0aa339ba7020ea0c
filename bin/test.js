#!/usr/bin/env node
// Runs the test files (tap programs), faster than `tap` alone and with the same tests and assertions:
//
// - The test files are bundled with esbuild first (one ESM file each, our code and the pure-JavaScript packages in
//   it, shared code in chunks; the same packages stay external as in dist/, see bin/build.js). Loading the sources
//   through tsx cost each test process 1.5-2.5 s of CPU more (measured on this 2-core machine: a codec test 3.75 s
//   wall with tsx, 1.3 s bundled), ~4 minutes of CPU over the suite. `import.meta.url` keeps naming the source file,
//   so fixtures and helpers are found where they are. Children a test spawns with `--import tsx` still run the
//   sources.
// - Temporary files (each test's copy of the PGlite template, recordings, Chromium profiles, npm caches) go to
//   /dev/shm when it is a tmpfs with room: copying the 39 MB, 1,000-file template took ~1.2 s on the ext4 disk and
//   0.1 s there, and a test file copies it once per gateway it starts.
// - Files start longest first (the wall times of the last run, kept in .cache/test-times.json, or on a fresh clone
//   the checked-in bin/test-times.json; folders known to be slow first for a file in neither), so a long file does
//   not start last and hold the run up alone.
// - bin/test-pool.js runs them as plain Node processes, as many at once as fit in 85% of the cores by what each
//   kept busy last time (tap's runner added ~0.85 s of CPU per file and ran a fixed count at once).
// - `--database` runs only the files whose behaviour depends on the database (DATABASE_SUITE below): the second
//   half of CI, against the PostgreSQL server, runs those rather than everything again.
//
// Usage: node bin/test.js [--checks] [--database] [--jobs N] [--alone] [--list] [--times] [--save-times] [files or folders...]
//   --checks also run Biome and tsc (`npm run lint`, `npm run typecheck`) as jobs beside the first test files
//   --jobs   at most this many files at once (default: four per core; the CPU budget still applies)
//   --alone  every file in a process of its own (by default short unit files share some: bin/test-groups.js)
//   --list   print the files that would run, in run order, and exit
//   --times  print the 20 slowest files of the last run (wall and CPU time) and exit
//   --save-times  write the last run's times to bin/test-times.json (bin/test-times-server.json with DATABASE_URL
//                 set), the seed a fresh clone starts from
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { EXTERNAL, loadEsbuild, REQUIRE_BANNER, TSCONFIG_RAW } from './build.js'
import { groupFiles, groupName, shareTimes } from './test-groups.js'
import { CPU_BUDGET, runPool } from './test-pool.js'
import { childCpuMs } from './test-preload.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
/** Each run bundles into a folder of its own (two runs in one checkout must not swap each other's files). */
const BUILDS = join(root, '.cache', 'tests')
const BUILD_DIR = join(BUILDS, String(process.pid))
/**
 * This checkout's last times. VOXGATE_TEST_TIMES names another file to read and write instead, with no seed under
 * it (a test of the runner gives it times of its own, so what it checks does not depend on the last run).
 *
 * Runs against the PostgreSQL server (DATABASE_URL set: the second half of CI) keep times of their own: the files
 * that need a server (replicas, a restarted database, workers) are skipped on PGlite in ~1 s and take 8-22 s on the
 * server, so one file for both halves ordered them last in the server half (one ran alone for its last 26 s) and
 * first, for nothing, in the next PGlite run.
 */
const TIMES_KIND = process.env.DATABASE_URL ? 'test-times-server.json' : 'test-times.json'
const TIMES_FILE = process.env.VOXGATE_TEST_TIMES ? resolve(process.env.VOXGATE_TEST_TIMES) : join(root, '.cache', TIMES_KIND)
/**
 * The times of a quiet run on a 2-core machine, checked in, for a fresh clone (no .cache yet): the order and the
 * weights (how many files run at once) come from them until this checkout has run the suite itself. Refresh after
 * adding slow files: `node bin/test.js --save-times` after a quiet run.
 */
const SEED_TIMES_FILE = join(root, 'bin', TIMES_KIND)
/**
 * The seeds a run reads, a later one over an earlier: a server run reads the PGlite seed under its own, for the files
 * it has no times of yet (a new file, or the whole suite on a server); a PGlite run reads its one seed once.
 */
const SEED_FILES = [...new Set([join(root, 'bin', 'test-times.json'), SEED_TIMES_FILE])]
/** Where test files are found (tap's `include` in package.json says the same) and the folders skipped in them. */
const TEST_ROOTS = ['test', 'client/test']
/** `npm test`'s checks before the tests: the same commands as `npm run lint` and `npm run typecheck`. */
const CHECKS = [
  ['biome check .', [join(root, 'node_modules', '.bin', 'biome'), 'check', '.']],
  // TypeScript 7's native compiler (the `typescript7` alias): the same check as TypeScript 5's `tsc` in 4 s of CPU
  // instead of 17 (2026-11-27, this project). TypeScript 5 stays for its JavaScript API (console types, tsx).
  // On one thread: its parallel checkers repeat work (6.8-7.7 s of CPU on two cores against 4.1-4.3 s on one, in the
  // same 3.6-3.9 s, 2026-11-28), and it runs beside the test files, which need the other core.
  [
    'tsc --noEmit',
    [process.execPath, join(root, 'node_modules', 'typescript7', 'bin', 'tsc'), '-p', 'tsconfig.json', '--noEmit', '--singleThreaded'],
  ],
]
/** The checks keep a core busy for ~4 s (tsc; Biome for ~1 s): they start first and count for a whole core. */
const CHECK_TIMES = { wallMs: 4_000, cpuMs: 4_000 }
/** tap's timeout for a test file, in seconds (package.json's tap config says the same). */
const FILE_TIMEOUT_S = 120
const NOT_TESTS = new Set(['fakes', 'fixtures', 'helpers', 'artifacts', 'node_modules'])

/**
 * The files the PostgreSQL half of CI runs: those whose behaviour depends on the database (the store, sessions,
 * replicas and fleets, recording, the API's queries). test/architecture/test-runner.test.ts holds this list to a
 * rule: a test file that imports the store or the test database helper, or reads DATABASE_URL, is in it.
 * Prefixes of paths from the checkout's root.
 */
const DATABASE_SUITE = [
  'test/api/',
  'test/campaigns/',
  'test/sessions/',
  'test/recording/',
  'test/gateway/store.test.ts',
  'test/gateway/connection-loss.test.ts',
  'test/gateway/pglite-template.test.ts',
  'test/gateway/sip-trunks-store.test.ts',
  'test/gateway/rate-limit-store.test.ts',
  'test/carrier-e2e/balancer.test.ts',
  'test/carrier-e2e/call-transfer.test.ts',
  'test/carrier-e2e/cross-replica.test.ts',
  'test/carrier-e2e/db-outage.test.ts',
  'test/carrier-e2e/machine-detection.test.ts',
  'test/carrier-e2e/outbound-balancer.test.ts',
  'test/carrier-e2e/outbound-pacing.test.ts',
  'test/carrier-e2e/replica-kill.test.ts',
  'test/carrier-e2e/rolling-restart.test.ts',
  'test/carrier-e2e/warm-transfer-replicas.test.ts',
  'test/transfer/transfer-leg-directory.test.ts',
  'test/sip/sip-hold-clock.test.ts',
  'test/carrier-e2e/tunnel-call.test.ts',
  'test/cli/serve-shutdown.test.ts',
  'test/cli/serve-workers.test.ts',
  'test/cli/tunnel.test.ts',
  'test/cli/tunnel-reconnect.test.ts',
  'test/openapi/response-schemas.test.ts',
  'test/sip/sip-gateway.test.ts',
  'test/sip/sip-auth-lockout.test.ts',
  'test/transfer/session-transfers.test.ts',
]

/** The tests' own programs that tests run as child processes (test/helpers/node-script.ts finds their bundles). */
const SCRIPTS = ['test/helpers/child-gateway.ts', 'test/helpers/log-exit-child.ts', 'test/fakes/carrier/calls-api-process.ts']

/** Without a last run's times: files here are the slow ones (browsers, processes, calls in real time). */
const SLOW = ['test/cli/', 'test/browser-e2e/', 'test/carrier-e2e/', 'test/browser/', 'test/latency/', 'test/pipeline/turns.test.ts']

/** Every test file, as a path from the root with forward slashes, sorted. */
function testFiles() {
  const found = []
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`
      if (entry.isDirectory()) {
        if (!NOT_TESTS.has(entry.name)) walk(rel)
      } else if (entry.name.endsWith('.test.ts')) found.push(rel)
    }
  }
  for (const dir of TEST_ROOTS) if (existsSync(join(root, dir))) walk(dir)
  return found.sort()
}

/** Whether `file` is `path` or lies in the folder `path` (with or without its trailing slash). */
function isUnder(file, path) {
  return file === path || file.startsWith(path.endsWith('/') ? path : `${path}/`)
}

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    return {}
  }
}

/** Each file's last times: this checkout's last run, else the checked-in seed. */
function readTimes() {
  const seeds = process.env.VOXGATE_TEST_TIMES ? [] : SEED_FILES.map(readJson)
  return Object.assign({}, ...seeds, readJson(TIMES_FILE))
}

/** Writes this checkout's last times as the seed (rounded to 100 ms; memory left out), for a fresh clone. */
function saveSeed() {
  const times = readJson(TIMES_FILE)
  const round = (ms) => Math.round((ms ?? 0) / 100) * 100
  const seed = Object.fromEntries(
    Object.keys(times)
      .filter((f) => existsSync(join(root, f)))
      .sort()
      .map((f) => [f, { wallMs: round(times[f].wallMs), cpuMs: round(times[f].cpuMs), childCpuMs: round(times[f].childCpuMs) }]),
  )
  writeFileSync(SEED_TIMES_FILE, `${JSON.stringify(seed, null, 1)}\n`)
  console.log(`# ${Object.keys(seed).length} files' times written to ${relative(root, SEED_TIMES_FILE)}`)
}

/** A group's times as one process's: its files' added up (undefined when one of them has none). */
function sumTimes(list) {
  if (list.some((t) => t === undefined)) return undefined
  const add = (k) => list.reduce((s, t) => s + (t[k] ?? 0), 0)
  return { wallMs: add('wallMs'), cpuMs: add('cpuMs'), childCpuMs: add('childCpuMs') }
}

/** Longest first: last run's wall time, else a guess from the folder. */
function longestFirst(files, times) {
  const guess = (f) => times[f]?.wallMs ?? (SLOW.some((p) => isUnder(f, p)) ? 20_000 : 3_000)
  return [...files].sort((a, b) => guess(b) - guess(a) || a.localeCompare(b))
}

/**
 * Keeps each bundled file's idea of where it is: `import.meta.url` (and `.dirname`, `.filename`) become the
 * source file's own, and a CommonJS file that reads `__dirname` or `__filename` gets its own. Code that finds a
 * fixture, a helper, the checkout's root or a package's data file next to itself finds it from inside the bundle.
 */
const sourceLocations = {
  name: 'source-locations',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8')
      const meta = text.includes('import.meta.')
      const cjs = text.includes('__dirname') || text.includes('__filename')
      if (!meta && !cjs) return undefined
      let contents = text
      if (meta) {
        contents = contents
          .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
          .replaceAll('import.meta.dirname', JSON.stringify(dirname(args.path)))
          .replaceAll('import.meta.filename', JSON.stringify(args.path))
      }
      if (cjs) contents = `var __filename = ${JSON.stringify(args.path)}, __dirname = ${JSON.stringify(dirname(args.path))};\n${contents}`
      return { contents, loader: /\.[cm]?ts$/.test(args.path) ? 'ts' : 'js' }
    })
  },
}

/** Removes the bundles of earlier runs whose process is gone (a run removes its own when it ends). */
function removeOldBuilds() {
  if (!existsSync(BUILDS)) return
  for (const entry of readdirSync(BUILDS)) {
    const pid = Number(entry)
    let alive = false
    try {
      alive = Number.isInteger(pid) && pid !== process.pid && process.kill(pid, 0)
    } catch {
      alive = false
    }
    if (!alive) rmSync(join(BUILDS, entry), { recursive: true, force: true })
  }
}

/** The entry of a group of test files sharing a process (bin/test-groups.js): one import of each, in run order. */
const GROUP_NAMESPACE = 'voxgate-test-group'
function groupEntries(groups) {
  return {
    name: 'test-groups',
    setup(build) {
      build.onResolve({ filter: /^voxgate-test-group:/ }, (args) => ({ path: args.path, namespace: GROUP_NAMESPACE }))
      build.onLoad({ filter: /.*/, namespace: GROUP_NAMESPACE }, (args) => {
        const files = groups.get(args.path)
        return { contents: files.map((f) => `import ${JSON.stringify(`./${f}`)}\n`).join(''), resolveDir: root, loader: 'js' }
      })
    },
  }
}

/**
 * Bundles `jobs` (in run order; each a test file alone or a group of them sharing a process) into BUILD_DIR; returns
 * each job's bundle by its files.
 */
export async function bundle(jobs) {
  const esbuild = await loadEsbuild()
  removeOldBuilds()
  // The run order is in the names: tap starts files in the order of their names.
  const names = jobs.map(
    (files, i) => `${String(i).padStart(3, '0')}.${files.length > 1 ? 'group.' : ''}${files[0].replace(/\.ts$/, '').replaceAll('/', '.')}`,
  )
  const groups = new Map(jobs.map((files, i) => [`voxgate-test-group:${i}`, files]).filter(([, files]) => files.length > 1))
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: {
      ...Object.fromEntries(jobs.map((files, i) => [names[i], files.length > 1 ? `voxgate-test-group:${i}` : files[0]])),
      ...Object.fromEntries(SCRIPTS.map((f) => [`scripts/${f.replace(/\.ts$/, '')}`, f])),
    },
    outdir: BUILD_DIR,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // tap must be the one the runner loads; playwright-core finds its own files; typescript is one 9 MB file.
    external: [...EXTERNAL, 'tap', '@tapjs/*', 'playwright-core', 'esbuild', 'typescript'],
    banner: { js: REQUIRE_BANNER },
    sourcemap: 'linked',
    // Stack traces need the mappings only: the sources are on disk (half the map's size, parsed by every process).
    sourcesContent: false,
    logLevel: 'error',
    plugins: [sourceLocations, groupEntries(groups)],
    tsconfigRaw: TSCONFIG_RAW,
  })
  // The service process esbuild keeps holds ~600 MB for nothing while the tests run.
  await esbuild.stop()
  return new Map(jobs.map((files, i) => [files, join(BUILD_DIR, `${names[i]}.js`)]))
}

/** A scratch folder on /dev/shm when that is a tmpfs with room (2 GB free), else undefined (the usual tmpdir). */
function fastTmpdir() {
  try {
    const fs = statfsSync('/dev/shm')
    if (fs.bavail * fs.bsize < 2 * 1024 ** 3) return undefined
    const dir = mkdtempSync('/dev/shm/voxgate-tests-')
    // As open as /tmp: a test runs a Postgres server as the postgres user with its data folder in here.
    chmodSync(dir, 0o1777)
    return dir
  } catch {
    return undefined
  }
}

function printTimes(times, limit = 20) {
  const rows = Object.entries(times).sort((a, b) => b[1].wallMs - a[1].wallMs)
  const total = (k) => rows.reduce((s, [, t]) => s + (t[k] ?? 0), 0) / 1000
  console.log(
    `# ${rows.length} files: ${total('wallMs').toFixed(0)} s of process wall time, CPU ${total('cpuMs').toFixed(0)} s (+${total('childCpuMs').toFixed(0)} s in children)`,
  )
  console.log('#  wall s   CPU s  child s  file')
  for (const [file, t] of rows.slice(0, limit)) {
    const cell = (ms) => (ms / 1000).toFixed(1).padStart(7)
    console.log(`# ${cell(t.wallMs)} ${cell(t.cpuMs)}  ${cell(t.childCpuMs)}  ${file}`)
  }
}

async function main(argv) {
  const flag = (name) => argv.includes(name)
  const jobsAt = argv.indexOf('--jobs')
  if (flag('--times')) {
    printTimes(readJson(TIMES_FILE))
    return 0
  }
  if (flag('--save-times')) {
    saveSeed()
    return 0
  }
  // Files and folders named on the command line (paths from here), else every test file.
  const named = argv.filter((a, i) => !a.startsWith('--') && (jobsAt < 0 || i !== jobsAt + 1))
  const wanted = named.map((f) => relative(root, resolve(f)).replaceAll('\\', '/'))
  let files = named.length === 0 ? testFiles() : testFiles().filter((f) => wanted.some((w) => isUnder(f, w)))
  if (flag('--database')) files = files.filter((f) => DATABASE_SUITE.some((p) => isUnder(f, p)))
  if (files.length === 0) {
    console.error(`no test files match ${named.join(' ')}`)
    return 1
  }
  const times = readTimes()
  files = longestFirst(files, times)
  if (flag('--list')) {
    console.log(files.join('\n'))
    return 0
  }
  const started = performance.now()
  const groups = flag('--alone') ? files.map((f) => [f]) : groupFiles(files, times, (f) => readFileSync(join(root, f), 'utf8'))
  const bundles = await bundle(groups)
  const shared = groups.filter((g) => g.length > 1)
  console.log(
    `# ${files.length} test files bundled in ${Math.round(performance.now() - started)} ms; ${shared.reduce((s, g) => s + g.length, 0)} short unit files share ${shared.length} processes`,
  )

  const cores = availableParallelism()
  const maxJobs = jobsAt >= 0 ? Number(argv[jobsAt + 1]) : Math.max(2, cores * 4)
  const scratch = fastTmpdir()
  const timingFile = join(scratch ?? tmpdir(), `voxgate-test-times-${process.pid}.jsonl`)
  const nodeArgs = [
    '--enable-source-maps',
    // WebAssembly (PGlite's Postgres, the fake TTS's espeak-ng) runs on V8's baseline compiler only: optimising the
    // hot functions in the background cost a short test process more CPU than it ever saved (PGlite opened and
    // queried 200 times: 2.4 s of CPU by default, 1.3 s like this, the queries 3 times faster).
    '--liftoff-only',
    `--import=${pathToFileURL(join(root, 'bin', 'test-preload.js')).href}`,
    // VOXGATE_TEST_PROFILE=DIR: a V8 CPU profile of each test process in DIR (open in Chrome's DevTools).
    ...(process.env.VOXGATE_TEST_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${resolve(process.env.VOXGATE_TEST_PROFILE)}`] : []),
  ]
  const env = {
    ...process.env,
    VOXGATE_TEST_TIMING: timingFile,
    VOXGATE_TEST_SCRIPTS: join(BUILD_DIR, 'scripts'),
    // The embedded databases of the gateways tests start (`serve`, `npm start`, child gateways) get 16 MB of shared
    // buffers, as test/helpers/db.ts gives its own: PGlite zeroes the pool at every start (~0.5 s of CPU for 128 MB).
    PGLITE_SHARED_BUFFERS_MB: process.env.PGLITE_SHARED_BUFFERS_MB ?? '16',
    ...(scratch !== undefined && { TMPDIR: scratch }),
  }
  // `--checks`: Biome and the type check run as two more jobs, beside the first test files rather than before all.
  const jobs = new Map([...(flag('--checks') ? CHECKS : []), ...[...bundles].map(([files, out]) => [groupName(files), out])])
  const checkTimes = Object.fromEntries(CHECKS.map(([name]) => [name, CHECK_TIMES]))
  const groupTimes = Object.fromEntries(shared.map((g) => [groupName(g), sumTimes(g.map((f) => times[f]))]))
  const result = await runPool(jobs, {
    cores,
    maxJobs,
    times: { ...times, ...groupTimes, ...checkTimes },
    nodeArgs,
    env,
    cwd: root,
    timeoutS: FILE_TIMEOUT_S,
  })
  const { counts } = result
  const filesOf = new Map([...bundles.keys()].map((g) => [groupName(g), g]))
  const notRun = result.notRun.reduce((n, job) => n + (filesOf.get(job)?.length ?? 0), 0)
  console.log(
    `# ${files.length - notRun} files, ${counts.total} tests: ${counts.pass} pass, ${counts.fail} fail, ${counts.skip} skip, ${counts.todo} todo`,
  )
  if (result.failed.length > 0) console.log(`# failed: ${result.failed.join(' ')}`)
  const code = result.failed.length > 0 || result.notRun.length > 0 ? 1 : 0

  const sourceOf = new Map([...bundles].map(([files, out]) => [out, files]))
  const ran = {}
  if (existsSync(timingFile)) {
    for (const line of readFileSync(timingFile, 'utf8').split('\n')) {
      if (line === '') continue
      const t = JSON.parse(line)
      const src = sourceOf.get(t.file)
      const measured = { wallMs: t.wallMs, cpuMs: t.cpuMs, childCpuMs: t.childCpuMs, rssMb: t.rssMb }
      if (src !== undefined) Object.assign(ran, shareTimes(src, measured, times))
    }
  }
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true })
  else rmSync(timingFile, { force: true })
  rmSync(BUILD_DIR, { recursive: true, force: true })
  mkdirSync(dirname(TIMES_FILE), { recursive: true })
  writeFileSync(TIMES_FILE, `${JSON.stringify({ ...readJson(TIMES_FILE), ...ran }, null, 1)}\n`)
  const seconds = (performance.now() - started) / 1000
  const atOnce = Object.values(ran).reduce((s, t) => s + t.wallMs, 0) / 1000 / seconds
  console.log(
    `# test run: ${seconds.toFixed(1)} s, ${(childCpuMs() / 1000).toFixed(0)} s of CPU in the test processes and theirs; ${atOnce.toFixed(1)} files at once on average (at most ${maxJobs}, within ${Math.round(cores * CPU_BUDGET * 100)}% of the CPU while a real-time file runs)${scratch ? '; temporary files on /dev/shm' : ''}`,
  )
  printTimes(ran, 10)
  return code
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  process.exitCode = await main(process.argv.slice(2))
}
