// Runs bundled test files as plain Node processes, several at once within a CPU budget, for bin/test.js.
//
// Why not tap's runner: it starts every test process with two module hooks (@tapjs/processinfo, which follows the
// process tree for coverage, and @tapjs/mock's import hook, which no test uses) and passes the first on to every
// child a test spawns. A bundled test that takes 0.36 s of CPU on its own took 1.2 s under the runner (measured on
// this 2-core machine, test/api/byte-range.test.ts): ~0.85 s per file, about 2 minutes of CPU over the suite. A test
// file is a tap program on its own (`import t from 'tap'` prints TAP, the counts, and sets the exit code), so the
// pool only starts them, keeps their output, and prints it when a file fails.
//
// How many at once: a file's weight is the share of a core it kept busy in the last run (its CPU and its children's
// over its wall time, from .cache/test-times.json). Most end-to-end files wait on real time (speech paced at 20 ms,
// a gateway's grace period) with a core a fifth busy. While one runs, files start (longest first) only while the
// running files' weights, or the machine's own measure when that is more (/proc/stat over the last 3 s, plus
// what started since, so another program running beside counts too), fit in 85% of the cores: the CPU never fills
// up enough to make a file that asserts on real time late. When only short busy files run (unit tests, API tests
// on PGlite: no real time to keep), they may fill the cores. tap's fixed count of files per core left the machine
// half idle (112% of 200% over a run) or, at four per core, starved the real-time files (4 of 7 runs had one
// fail); running the busy files beside the budget at nice 10 starved them too (3 failures in a run).
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'

/** Share of the cores the running files' weights may fill. */
export const CPU_BUDGET = 0.85
/**
 * Weight of a file with no last run to go by: a whole core. Such a file may be a busy one, and busy files counted
 * light starve the real-time ones (2026-11-26: forty new files at 0.45 ran beside the end-to-end files and a
 * recording test's marks were echoed 200 ms late). Refresh bin/test-times.json after adding files.
 */
const UNKNOWN_WEIGHT = 1
/**
 * A short file this busy on its own (unit tests, API tests on PGlite) is a batch file: nothing in it keeps real
 * time, so when only such files run they may fill the cores. Files that start processes (a served gateway, the CLI,
 * npm) are not: they time drains and grace periods.
 */
const BATCH_WEIGHT = 0.6
const BATCH_MAX_WALL_MS = 8_000
const BATCH_MAX_CHILD_CPU_MS = 500
/**
 * What batch files alone may fill, as a share of the cores: more than all of them, since a file that keeps "a core"
 * busy shows as 1.1-1.3 cores (its GC and libuv threads), and two of them on two cores is what is wanted.
 */
const BATCH_BUDGET = 1.25
/** A file's threads (GC, libuv, a browser's processes) can keep more than one core busy. */
const MAX_WEIGHT = 2
/** No file counts for less than this (start-up bursts: a gateway, a browser). */
const MIN_WEIGHT = 0.15
/** Output kept per file for its failure report (the tail of it). */
const MAX_OUTPUT = 4 * 1024 * 1024
/** A file that outlives tap's own timeout by this much is killed with its process group (by default). */
const KILL_GRACE_MS = 30_000

/** A file whose process outlives its tests by more than this many seconds (bin/test-preload.js says) is named in its line. */
const LINGER_S = 1.5
/** How often the pool looks at the machine's load while no file ends. */
const TICK_MS = 250
/** A file counts for at least this much of a core in its first STARTUP_MS. */
const STARTUP_WEIGHT = 0.6
const STARTUP_MS = 2_000
/** The window the machine's load is measured over (long enough to smooth a file's start-up burst). */
const LOAD_WINDOW_MS = 3000
/** A file started this lately is not in the machine's measure yet. */
const UNSEEN_MS = 1000

/**
 * The machine's busy cores over about the last `windowMs`, from the first line of /proc/stat (Linux). `busyCores()`
 * returns undefined where there is no such file, and until a first interval has passed.
 */
export function createCpuMeter(
  readStat = () => readFileSync('/proc/stat', 'utf8'),
  now = () => performance.now(),
  windowMs = LOAD_WINDOW_MS,
) {
  const samples = []
  const sample = () => {
    try {
      const fields = readStat().split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
      if (fields.length < 4 || fields.some((n) => !Number.isFinite(n))) return undefined
      // user nice system idle iowait irq softirq steal ...: idle and iowait are a core not working, and so is time
      // given to programs at a positive nice: they give way to the test files (a build at `nice 19` beside the run).
      return { at: now(), idle: fields[1] + fields[3] + (fields[4] ?? 0), total: fields.reduce((a, b) => a + b, 0) }
    } catch {
      return undefined
    }
  }
  return {
    busyCores(cores) {
      const s = sample()
      if (s === undefined) return undefined
      samples.push(s)
      // Keep the newest sample at least a window old as the base, and the ones after it.
      while (samples.length > 2 && s.at - samples[1].at >= windowMs) samples.shift()
      const base = samples[0]
      const ticks = s.total - base.total
      if (base === s || ticks <= 0) return undefined
      return (1 - (s.idle - base.idle) / ticks) * cores
    },
  }
}

/** Whether a file with last run's times `t` is a batch file (see BATCH_WEIGHT). */
export function isBatch(t) {
  return t !== undefined && weightOf(t) >= BATCH_WEIGHT && t.wallMs < BATCH_MAX_WALL_MS && (t.childCpuMs ?? 0) < BATCH_MAX_CHILD_CPU_MS
}

/** The share of a core `t` (a last run's times of one file) kept busy. */
export function weightOf(t) {
  if (t === undefined || !(t.wallMs > 0)) return UNKNOWN_WEIGHT
  return Math.min(MAX_WEIGHT, Math.max(MIN_WEIGHT, ((t.cpuMs ?? 0) + (t.childCpuMs ?? 0)) / t.wallMs))
}

/**
 * tap's counts comment, the last line of a test program's output that looks like `# { total: 21, pass: 20, skip: 1 }`,
 * as an object; undefined when there is none (the program ended before tap did).
 */
export function parseCounts(output) {
  const lines = output.split('\n')
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /^# \{ (.*) \}$/.exec(lines[i])
    if (m === null) continue
    const counts = {}
    for (const pair of m[1].split(', ')) {
      const [key, value] = pair.split(': ')
      if (!/^\w+$/.test(key ?? '') || !/^\d+$/.test(value ?? '')) return undefined
      counts[key] = Number(value)
    }
    return counts
  }
  return undefined
}

/**
 * The next file to start: the first in `queue` (run order) whose weight fits beside `load` (the running files'
 * weights, or the machine's own measure when that is more), or the first of all when nothing runs. The budget is
 * `capacity` while a real-time file runs or would start, all the cores when only batch files would run.
 */
export function pickNext(queue, weights, batch, { load, capacity, running, realTime, cores }) {
  if (queue.length === 0) return -1
  if (running === 0) return 0
  return queue.findIndex((f) => {
    const budget = realTime > 0 || !batch.has(f) ? capacity : cores * BATCH_BUDGET
    return load + (weights.get(f) ?? UNKNOWN_WEIGHT) <= budget + 1e-9
  })
}

/**
 * The load a file would start beside, in cores: the running files' weights (`busy`, plus what files started in the
 * last STARTUP_MS add to reach STARTUP_WEIGHT), or the machine's measure over the last window when that is more.
 * The measure lags both ways: a file started in the last UNSEEN_MS is not in it yet (its weight is added), and one
 * that ended within the window still is, for the part of the window it ran in (that part is taken off: without it,
 * short files ending and starting one after another counted twice, and the last ninety ran about one at a time).
 */
export function estimateLoad({ now, busy, measured, started, ended, windowMs = LOAD_WINDOW_MS }) {
  const recent = started.filter((f) => f.at >= now - STARTUP_MS)
  const starting = recent.reduce((s, f) => s + Math.max(0, STARTUP_WEIGHT - f.weight), 0)
  if (measured === undefined) return busy + starting
  const unseen = recent.filter((f) => f.at >= now - UNSEEN_MS).reduce((s, f) => s + f.weight, 0)
  // The share of the window each ended file ran in: from its start (or the window's) to its end.
  const gone = ended.reduce((s, f) => s + (f.weight * Math.max(0, f.at - Math.max(f.began, now - windowMs))) / windowMs, 0)
  return Math.max(busy + starting, measured + unseen - gone)
}

/**
 * Runs `files` (source path -> bundle path, or a check's command line as an array; in run order). Prints one line
 * per file, the whole output of a failed one, and returns the counts summed and the files that failed.
 */
export async function runPool(
  files,
  { cores, maxJobs, times, nodeArgs, env, cwd, timeoutS, killGraceMs = KILL_GRACE_MS, meter = createCpuMeter() },
) {
  const queue = [...files.keys()]
  const weights = new Map(queue.map((f) => [f, weightOf(times[f])]))
  const batch = new Set(queue.filter((f) => isBatch(times[f])))
  const capacity = cores * CPU_BUDGET
  const total = { total: 0, pass: 0, fail: 0, skip: 0, todo: 0 }
  const failed = []
  const running = new Map()
  /** The weights of the running files, and how many of them keep real time. */
  let busy = 0
  let realTime = 0
  let done = 0
  let stopping = false

  const poolStarted = performance.now()
  const debug = process.env.VOXGATE_TEST_POOL_DEBUG === '1'
  /** One line per file: `why` it failed (undefined: it passed) and its summary; a failed file's output after it. */
  const finish = (file, why, summary, output) => {
    done += 1
    const at = `ended at ${((performance.now() - poolStarted) / 1000).toFixed(0)} s`
    if (why === undefined) console.log(`ok ${done} - ${file} # ${summary}, ${at}`)
    else {
      console.log(`not ok ${done} - ${file} # ${why}, ${summary}, ${at}`)
      failed.push(file)
      console.log(output.replace(/^/gm, '    '))
    }
  }

  const start = (file) => {
    const weight = weights.get(file)
    const keepsTime = !batch.has(file)
    busy += weight
    if (keepsTime) realTime += 1
    const began = performance.now()
    // A test file's bundle, or a check's command line (Biome, tsc).
    const target = files.get(file)
    const check = Array.isArray(target)
    const [command, args] = check ? [target[0], target.slice(1)] : [process.execPath, [...nodeArgs, target]]
    // Its own process group, so a timeout ends the gateways and browsers it started as well.
    const child = spawn(command, args, {
      cwd,
      env: { ...env, TAP_TIMEOUT: String(timeoutS) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    let output = ''
    const keep = (chunk) => {
      output += chunk
      if (output.length > MAX_OUTPUT) output = output.slice(-MAX_OUTPUT)
    }
    child.stdout.setEncoding('utf8').on('data', keep)
    child.stderr.setEncoding('utf8').on('data', keep)
    const killer = setTimeout(() => killGroup(child, 'SIGKILL'), timeoutS * 1000 + killGraceMs)
    const ended = new Promise((resolve) => {
      child.on('error', (e) => {
        keep(`\n${e.stack ?? e}\n`)
      })
      child.on('close', (code, signal) => {
        clearTimeout(killer)
        busy -= weight
        if (keepsTime) realTime -= 1
        finished.push({ began, at: performance.now(), weight })
        running.delete(file)
        const counts = check ? undefined : parseCounts(output)
        const seconds = ((performance.now() - began) / 1000).toFixed(1)
        if (counts !== undefined) for (const k of Object.keys(total)) total[k] += counts[k] ?? 0
        const why =
          signal !== null
            ? `killed by ${signal}`
            : code !== 0
              ? `exit code ${code}`
              : counts === undefined && !check
                ? "ended without tap's counts"
                : counts?.fail > 0
                  ? `${counts.fail} failed`
                  : undefined
        // A process that lives on after tap's last line (a timer or a socket left open) costs the run that long.
        const after = Number(/^# lingered (\d+) ms$/m.exec(output.slice(-500))?.[1] ?? 0) / 1000
        const lingered = after > LINGER_S ? `; lived ${after.toFixed(1)} s past its tests (something left open)` : ''
        const summary = (counts === undefined ? `${seconds} s` : `${seconds} s, ${counts.total} tests`) + lingered
        finish(file, why, summary, output)
        resolve()
      })
    })
    running.set(file, { child, ended })
  }

  const stopAll = (signal) => {
    stopping = true
    for (const { child } of running.values()) killGroup(child, signal)
  }
  process.on('SIGINT', stopAll)
  process.on('SIGTERM', stopAll)
  // Files started lately: the machine's measure does not show them yet, and a file's first seconds (loading its
  // bundle, starting a gateway, PGlite, a browser) keep a core busier than its average.
  const started = []
  const finished = []
  const load = (measured) => {
    const now = performance.now()
    while (started.length > 0 && started[0].at < now - STARTUP_MS) started.shift()
    while (finished.length > 0 && finished[0].at < now - LOAD_WINDOW_MS) finished.shift()
    return estimateLoad({ now, busy, measured, started, ended: finished })
  }
  try {
    while ((queue.length > 0 && !stopping) || running.size > 0) {
      const measured = meter.busyCores(cores)
      while (!stopping && running.size < maxJobs) {
        const state = { load: load(measured), capacity, running: running.size, realTime, cores }
        const i = pickNext(queue, weights, batch, state)
        if (debug) console.error(`# pool: ${JSON.stringify({ ...state, measured, busy, next: queue[i] ?? null })}`)
        if (i < 0) break
        const file = queue.splice(i, 1)[0]
        started.push({ at: performance.now(), weight: weights.get(file) })
        start(file)
      }
      let tick
      await Promise.race([
        ...[...running.values()].map((r) => r.ended),
        ...(queue.length > 0 ? [new Promise((r) => (tick = setTimeout(r, TICK_MS)))] : []),
      ])
      clearTimeout(tick)
    }
  } finally {
    process.off('SIGINT', stopAll)
    process.off('SIGTERM', stopAll)
  }
  return { counts: total, failed, notRun: queue }
}

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal)
  } catch {
    child.kill(signal)
  }
}
