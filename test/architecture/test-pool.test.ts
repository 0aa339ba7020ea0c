// bin/test-pool.js runs the suite's files (see bin/test.js): which file starts next within the CPU budget, how a
// file's result is read, and that a failing, a silent and a hung file each fail the run.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'

interface Times {
  wallMs: number
  cpuMs?: number
  childCpuMs?: number
}
interface Pool {
  CPU_BUDGET: number
  weightOf(t: Times | undefined): number
  parseCounts(output: string): Record<string, number> | undefined
  createCpuMeter(readStat: () => string, now: () => number, windowMs: number): { busyCores(cores: number): number | undefined }
  isBatch(t: Times | undefined): boolean
  estimateLoad(o: {
    now: number
    busy: number
    measured: number | undefined
    started: { at: number; weight: number }[]
    ended: { began: number; at: number; weight: number }[]
    windowMs?: number
  }): number
  pickNext(
    queue: string[],
    weights: Map<string, number>,
    batch: Set<string>,
    state: { load: number; capacity: number; running: number; realTime: number; cores: number },
  ): number
  runPool(
    files: Map<string, string | string[]>,
    o: {
      cores: number
      maxJobs: number
      times: Record<string, Times>
      nodeArgs: string[]
      env: NodeJS.ProcessEnv
      cwd: string
      timeoutS: number
      killGraceMs?: number
      meter?: { busyCores(cores: number): number | undefined }
    },
  ): Promise<{ counts: Record<string, number>; failed: string[]; notRun: string[] }>
}
// A plain JavaScript program of ours, loaded from the checkout (not bundled into this test).
const pool = (await import(new URL('../../bin/test-pool.js', import.meta.url).href)) as Pool

t.test('a file weighs the share of a core it kept busy last time, within bounds', async (t) => {
  t.equal(pool.weightOf({ wallMs: 10_000, cpuMs: 3_000, childCpuMs: 1_000 }), 0.4)
  t.equal(pool.weightOf({ wallMs: 10_000, cpuMs: 100 }), 0.15, 'a mostly waiting file still counts for 15% of a core')
  t.equal(pool.weightOf({ wallMs: 1_000, cpuMs: 900, childCpuMs: 300 }), 1.2, 'threads can keep more than a core busy')
  t.equal(pool.weightOf({ wallMs: 1_000, cpuMs: 2_000, childCpuMs: 900 }), 2, 'never more than two')
  t.equal(pool.weightOf(undefined), 1, 'a file never run counts as a whole core (it may be a busy one)')
  t.equal(pool.weightOf({ wallMs: 0, cpuMs: 10 }), 1)
})

t.test("tap's counts comment is read from the end of the output", async (t) => {
  t.same(pool.parseCounts('ok 1 - a\n# { total: 3, pass: 2, skip: 1 }\n# time=40ms\n'), { total: 3, pass: 2, skip: 1 })
  t.same(pool.parseCounts('# { total: 1, pass: 1 }\n# Subtest\n# { total: 2, pass: 1, fail: 1 }\n'), {
    total: 2,
    pass: 1,
    fail: 1,
  })
  t.equal(pool.parseCounts('ok 1 - a\n1..1\n'), undefined, 'none when tap did not finish')
  t.equal(pool.parseCounts('# { total: x }\n'), undefined, 'none when it is not counts')
})

t.test('short busy files that start no processes are batch files', async (t) => {
  t.ok(pool.isBatch({ wallMs: 2_000, cpuMs: 1_900 }), 'a unit test')
  t.notOk(pool.isBatch({ wallMs: 20_000, cpuMs: 15_000 }), 'a long file')
  t.notOk(pool.isBatch({ wallMs: 3_000, cpuMs: 500, childCpuMs: 2_000 }), 'a file whose children do the work')
  t.notOk(pool.isBatch({ wallMs: 3_000, cpuMs: 900 }), 'a file that mostly waits')
  t.notOk(pool.isBatch(undefined), 'a file never run')
})

t.test('the next file is the first in run order that fits beside the running ones', async (t) => {
  const weights = new Map([
    ['a', 0.5],
    ['b', 0.3],
    ['c', 0.2],
    ['unit', 0.9],
    ['unit2', 1],
  ])
  const batch = new Set(['unit', 'unit2'])
  const at = (load: number, running: number, realTime = running) => ({ load, capacity: 1.7, running, realTime, cores: 2 })
  t.equal(pool.pickNext(['a', 'b', 'c'], weights, batch, at(0, 0)), 0)
  t.equal(pool.pickNext(['a', 'b', 'c'], weights, batch, at(1.3, 3)), 1, 'a does not fit, b does')
  t.equal(pool.pickNext(['a', 'c'], weights, batch, at(1.5, 4)), 1, 'c fits')
  t.equal(pool.pickNext(['a', 'b'], weights, batch, at(1.5, 4)), -1, 'nothing fits: wait')
  t.equal(pool.pickNext(['a'], weights, batch, at(5, 0)), 0, 'with nothing running the first starts whatever the load')
  t.equal(pool.pickNext([], weights, batch, at(0, 0)), -1)
  t.equal(pool.pickNext(['unit', 'c'], weights, batch, at(0.9, 2)), 1, 'a batch file within the budget of real-time ones')
  t.equal(pool.pickNext(['unit2'], weights, batch, at(1.25, 1, 0)), 0, 'batch files alone fill the cores')
  t.equal(pool.pickNext(['unit2'], weights, batch, at(2.25, 2, 0)), -1, 'two per two cores')
  t.equal(pool.pickNext(['a'], weights, batch, at(1.3, 1, 0)), -1, 'a real-time file beside them keeps to the budget')
  t.equal(pool.pickNext(['x'], weights, batch, at(0.7, 3)), 0, 'a file never run counts for a whole core')
  t.equal(pool.pickNext(['x'], weights, batch, at(0.8, 3)), -1)
})

t.test('the load a file starts beside: the weights, or the measure corrected for what it does not show yet or any more', async (t) => {
  const none = { started: [], ended: [] }
  const round = (n: number) => Math.round(n * 1e6) / 1e6
  t.equal(pool.estimateLoad({ now: 10_000, busy: 1.2, measured: undefined, ...none }), 1.2, 'no measure: the weights')
  t.equal(pool.estimateLoad({ now: 10_000, busy: 1.2, measured: 1.5, ...none }), 1.5, 'the measure when it is more')
  t.equal(
    round(pool.estimateLoad({ now: 10_000, busy: 0.2, measured: 0.2, started: [{ at: 9_900, weight: 0.2 }], ended: [] })),
    0.6,
    'a file just started counts for 0.6 of a core (the weights: 0.2 + 0.4 of start-up), and the measure does not show it yet (0.2 + 0.2)',
  )
  t.equal(
    round(pool.estimateLoad({ now: 10_000, busy: 0.5, measured: 2, started: [], ended: [{ began: 8_500, at: 9_400, weight: 1 }] })),
    1.7,
    'a file that ended is taken off the measure for the part of the 3 s window it ran in (0.9 s of it: 0.3 of a core)',
  )
  t.equal(
    round(pool.estimateLoad({ now: 10_000, busy: 0, measured: 2, started: [], ended: [{ began: 5_000, at: 9_999, weight: 1 }] })),
    1.000333,
    'a file that ran the whole window and just ended: its whole weight',
  )
  t.equal(
    pool.estimateLoad({ now: 10_000, busy: 0.5, measured: 2, started: [], ended: [{ began: 1_000, at: 6_000, weight: 1 }] }),
    2,
    'one that ended before the window is not in the measure',
  )
})

t.test("the machine's load is read from /proc/stat over the last window", async (t) => {
  let stat = ''
  let at = 0
  const meter = pool.createCpuMeter(
    () => stat,
    () => at,
    1000,
  )
  // user nice system idle iowait irq softirq steal guest guest_nice, in clock ticks since boot.
  const line = (busy: number, idle: number) => `cpu  ${busy} 0 0 ${idle} 0 0 0 0 0 0\ncpu0 1 2 3 4\n`
  stat = line(1000, 1000)
  t.equal(meter.busyCores(2), undefined, 'nothing to compare with yet')
  at = 500
  stat = line(1075, 1025)
  t.equal(meter.busyCores(2), 1.5, '75 of 100 ticks busy on 2 cores')
  at = 1000
  stat = line(1175, 1025)
  t.equal(meter.busyCores(2), 1.75, 'over the whole second: 175 of 200')
  at = 1500
  stat = line(1200, 1100)
  t.equal(meter.busyCores(2), 1.25, 'the sample older than a second is dropped: 125 of 200 since 500 ms')
  const niceLine = (busy: number, nice: number, idle: number) => `cpu  ${busy} ${nice} 0 ${idle} 0 0 0 0 0 0\n`
  const niced = pool.createCpuMeter(
    () => stat,
    () => at,
    1000,
  )
  at = 0
  stat = niceLine(1000, 0, 1000)
  niced.busyCores(2)
  at = 1000
  stat = niceLine(1050, 100, 1050)
  t.equal(niced.busyCores(2), 0.5, 'time of programs at a positive nice (a build at nice 19) counts as a core free: 50 of 200')
  const broken = pool.createCpuMeter(
    () => 'no such thing',
    () => 0,
    1000,
  )
  t.equal(broken.busyCores(2), undefined, 'no measure where there is no /proc/stat')
})

t.test('files run as programs: a pass, a failure, a file without counts and a hung file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'test-pool-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const program = (name: string, body: string) => {
    writeFileSync(join(dir, name), body)
    return [name, join(dir, name)] as const
  }
  const files = new Map<string, string | string[]>([
    ['a check', [process.execPath, '-e', 'console.log("fine")']],
    ['a failing check', [process.execPath, '-e', 'console.log("2 errors"); process.exit(3)']],
    program('pass.mjs', "console.log('ok 1 - a\\n1..1\\n# { total: 4, pass: 3, skip: 1 }')"),
    program('linger.mjs', "console.log('# { total: 1, pass: 1 }'); console.error('# lingered 2500 ms')"),
    program('fail.mjs', "console.log('not ok 1 - a\\n# { total: 2, pass: 1, fail: 1 }'); process.exitCode = 1"),
    program('silent.mjs', "console.log('ok 1 - a')"),
    program('hang.mjs', "console.log('# { total: 1, pass: 1 }'); setInterval(() => {}, 1000)"),
  ])
  const lines: string[] = []
  const log = console.log
  console.log = (line: string) => lines.push(line)
  let result: Awaited<ReturnType<Pool['runPool']>>
  try {
    result = await pool.runPool(files, {
      cores: 2,
      maxJobs: 4,
      times: {},
      nodeArgs: [],
      env: process.env,
      cwd: dir,
      timeoutS: 0.5,
      killGraceMs: 200,
    })
  } finally {
    console.log = log
  }
  t.same([...result.failed].sort(), ['a failing check', 'fail.mjs', 'hang.mjs', 'silent.mjs'])
  t.same(result.notRun, [])
  t.same(result.counts, { total: 8, pass: 6, fail: 1, skip: 1, todo: 0 }, 'the counts of the files that printed them')
  const text = lines.join('\n')
  t.match(text, /^ok \d - pass\.mjs # [\d.]+ s, 4 tests, ended at \d+ s$/m)
  t.match(text, /^ok \d - a check # [\d.]+ s, ended at \d+ s$/m, 'a check needs no counts')
  t.match(text, /^not ok \d - a failing check # exit code 3/m)
  t.match(text, /^ {4}2 errors$/m, "a failed check's output is printed")
  t.match(text, /^ok \d - linger\.mjs # [\d.]+ s, 1 tests; lived 2\.5 s past its tests \(something left open\), ended at \d+ s$/m)
  t.match(text, /^not ok \d - fail\.mjs # exit code 1/m)
  t.match(text, /^not ok \d - silent\.mjs # ended without tap's counts/m)
  t.match(text, /^not ok \d - hang\.mjs # killed by SIGKILL/m)
  t.match(text, /^ {4}not ok 1 - a$/m, "a failed file's output is printed, indented")
})

t.test('on a machine kept busy by something else, the files run one at a time', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'test-pool-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const log = join(dir, 'log')
  const files = new Map(
    ['a', 'b', 'c'].map((name) => {
      const file = join(dir, `${name}.mjs`)
      writeFileSync(
        file,
        `import { appendFileSync } from 'node:fs'
appendFileSync(${JSON.stringify(log)}, 'start ${name}\\n')
setTimeout(() => { appendFileSync(${JSON.stringify(log)}, 'end ${name}\\n'); console.log('# { total: 1, pass: 1 }') }, 300)`,
      )
      return [name, file] as const
    }),
  )
  const quiet = console.log
  console.log = () => {}
  let result: Awaited<ReturnType<Pool['runPool']>>
  try {
    result = await pool.runPool(files, {
      cores: 2,
      maxJobs: 4,
      times: Object.fromEntries(['a', 'b', 'c'].map((f) => [f, { wallMs: 1000, cpuMs: 200 }])),
      nodeArgs: [],
      env: process.env,
      cwd: dir,
      timeoutS: 30,
      meter: { busyCores: () => 1.6 },
    })
  } finally {
    console.log = quiet
  }
  t.same(result.failed, [])
  const events = readFileSync(log, 'utf8').trim().split('\n')
  t.same(events, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c'], 'each started after the one before ended')
})
