// The measured stretch of a calls benchmark (carrier-calls, sip-calls): N calls are live in this process's
// gateway; for a fixed time it records the event loop's lateness, the gateway's own stalls beside the machine's
// (bench/stalls.ts), GC pauses, CPU, the VAD frames run and the turns the world's backend saw, and turns them into
// the columns both benchmarks print, so the two read side by side.
import { monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks'
import { sharedVadBatcher } from '../pipeline/vad/vad-batcher.js'
import { sileroFrameSamples } from '../pipeline/vad/silero-model.js'
import { cpuMs, fmt, type BenchRow } from './bench-util.js'
import { mainThreadCpuMs } from './proc-stats.js'
import { startProfile, stageTable } from './cpu-stages.js'
import type { startSentinel } from './carrier-bench-setup.js'
import { type Stall, StallRecorder, uncovered } from './stalls.js'

/** The stall sentinel (carrier-bench-setup.ts) a window compares the gateway's stalls with. */
export type Sentinel = Awaited<ReturnType<typeof startSentinel>>

/**
 * Measures `seconds` of `calls` live calls; `turns()` reads the backend's count of turns so far. `sentinel`: started
 * by the caller at least a second before, as the calls settle: starting a Node process (the sentinel loads tsx) takes
 * the machine's CPU for a moment, and the gateway's catching up after it used to be the window's worst stall. With
 * `profileFile`, a CPU profile of the stretch is written there and the gateway's CPU by stage printed (cpu-stages.ts).
 */
export async function measureLoad(
  calls: number,
  seconds: number,
  turns: () => Promise<number>,
  sentinel: Sentinel,
  profileFile?: string,
): Promise<BenchRow> {
  const stalls = new StallRecorder(2, EXPLAIN_STALLS)
  const loop = monitorEventLoopDelay({ resolution: 1 })
  loop.enable()
  stalls.start()
  // GC pauses are what used to break the 20 ms rule (see the README); report the longest so a regression shows.
  let gcMax = 0
  const gcs: { from: number; to: number; kind: number }[] = []
  const gcWatch = new PerformanceObserver((list) => {
    for (const e of list.getEntries() as PerformanceEntry[]) {
      gcMax = Math.max(gcMax, e.duration)
      if (EXPLAIN_STALLS) {
        const from = performance.timeOrigin + e.startTime
        gcs.push({ from, to: from + e.duration, kind: (e as { detail?: { kind?: number } }).detail?.kind ?? 0 })
      }
    }
  })
  gcWatch.observe({ entryTypes: ['gc'] })
  const turns0 = await turns()
  const vad0 = sharedVadBatcher().stats.frames
  const batches0 = sharedVadBatcher().stats.batches
  const profiler = profileFile === undefined ? undefined : await startProfile(profileFile)
  const c0 = cpuMs()
  const main0 = mainThreadCpuMs()
  const t0 = performance.now()
  await new Promise((r) => setTimeout(r, seconds * 1000))
  const cpu = cpuMs() - c0
  const mainCpu = mainThreadCpuMs() - main0
  const wall = performance.now() - t0
  const profile = await profiler?.stop()
  if (profile !== undefined) process.stderr.write(`CPU by stage at ${calls} calls (profile: ${profileFile}):\n${stageTable(profile)}\n`)
  // Frames the model actually ran (a VAD that falls behind skips frames as silence): should be ~100%.
  const vadFrames = sharedVadBatcher().stats.frames - vad0
  const vadShare = (100 * vadFrames) / (((calls * 8000) / sileroFrameSamples(8000)) * (wall / 1000))
  // Frames per model call: alone, the model took ~49 us a frame in calls of 4 and ~34 in calls of 32.
  const vadBatch = vadFrames / Math.max(1, sharedVadBatcher().stats.batches - batches0)
  loop.disable()
  gcWatch.disconnect()
  const own = stalls.stop()
  const turnCount = (await turns()) - turns0
  const machine = await sentinel.report()
  // The timer runs every 1 ms, so a gap of g ms means the loop was g - 1 ms late.
  const worstOwnMs = Math.max(0, ...own.map((s) => uncovered(s, machine) - 1))
  if (EXPLAIN_STALLS) explainStalls(own, machine, gcs, t0)
  const machineMaxMs = Math.max(0, ...machine.map((s) => s.to - s.from - 1))
  const cpuShare = (100 * cpu) / wall
  return {
    'loop delay p99 ms': fmt(loop.percentile(99) / 1e6),
    'loop delay max ms': fmt(loop.max / 1e6),
    'machine pauses > 10 ms': machine.filter((s) => s.to - s.from > 10).length,
    'longest machine pause ms': fmt(machineMaxMs),
    'worst gateway delay ms': fmt(worstOwnMs),
    'no frame later than 20 ms': worstOwnMs <= 20 ? 'yes' : 'no',
    'longest GC pause ms': fmt(gcMax),
    'CPU % of one core': fmt(cpuShare),
    // Of it, the event loop's thread (the rest: V8's GC and compiler threads, libuv's pool); NaN off Linux.
    'main thread CPU %': fmt((100 * mainCpu) / wall),
    'CPU % per call': fmt(cpuShare / calls),
    // A core's worth of calls at this load per call. Left blank when the VAD skipped frames: a gateway that did
    // not get the CPU it asked for (a busy machine) did less work per call, and the figure would flatter it.
    'calls per core': vadShare >= 95 ? Math.floor((100 * calls) / cpuShare) : '',
    'VAD frames run %': fmt(vadShare),
    'VAD frames per model call': fmt(vadBatch),
    'turns per call per min': fmt(turnCount / calls / (wall / 60000)),
  }
}

/**
 * `CARRIER_BENCH_STALLS=1`: each of the gateway's own stalls over 10 ms is printed with the CPU the process used in
 * it (about its length: the loop was busy; far less: the process was not scheduled, or waited in a system call),
 * the main thread's share of the stall running, waiting in the run queue for a core and blocked (waiting on a lock,
 * as for a V8 helper thread, or in a system call), and the GC pauses inside it, to tell the kinds of stall apart.
 */
const EXPLAIN_STALLS = process.env.CARRIER_BENCH_STALLS === '1'

function explainStalls(
  own: readonly Stall[],
  machine: readonly Stall[],
  gcs: readonly { from: number; to: number; kind: number }[],
  t0: number,
) {
  const start = performance.timeOrigin + t0
  // The monotonic clock's µs (a CPU profile's sample times) at shared-clock ms 0, to find a stall in a profile.
  const monoUs = Number(process.hrtime.bigint() / 1000n) - (performance.timeOrigin + performance.now()) * 1000
  for (const s of own) {
    const mine = uncovered(s, machine) - 1
    if (mine <= 10) continue
    const inside = gcs.filter((g) => g.to > s.from && g.from < s.to)
    const gc = inside.map((g) => `${GC_KINDS[g.kind] ?? g.kind} ${fmt(g.to - g.from)}`).join(', ')
    process.stderr.write(
      `stall at +${fmt(s.from - start)} ms: ${fmt(s.to - s.from - 1)} ms (own ${fmt(mine)}), CPU ${fmt(s.cpuMs ?? Number.NaN)} ms (main thread ran ${fmt(s.mainRanMs ?? Number.NaN)}, waited for a core ${fmt(s.mainWaitedMs ?? Number.NaN)}, blocked ${fmt(s.to - s.from - (s.mainRanMs ?? Number.NaN) - (s.mainWaitedMs ?? Number.NaN))}); GC: ${gc || 'none'}; monotonic us ${Math.round(s.from * 1000 + monoUs)}-${Math.round(s.to * 1000 + monoUs)}\n`,
    )
  }
}

/** perf_hooks' GC kinds (constants.NODE_PERFORMANCE_GC_*). */
const GC_KINDS: Record<number, string> = { 1: 'minor', 2: 'minor mark-sweep', 4: 'major', 8: 'incremental', 16: 'weakcb' }

/** JS heap plus memory outside it (buffers, sockets), after a GC when --expose-gc allows one. */
export function usedMemory(): number {
  ;(globalThis as { gc?: () => void }).gc?.()
  const m = process.memoryUsage()
  return m.heapUsed + m.external
}
