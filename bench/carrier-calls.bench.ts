// Concurrent simulated phone calls against one gateway process (carrier path, VAD on, zero-latency vendor fakes).
// The phones, the vendor fakes and the customer backend run in a child process (bench/carrier-world.ts), so
// this process holds only the gateway: one Node process is one core. Reports, per call count: event-loop
// lateness (a 20 ms frame can only be late if the loop was blocked), the synchronous handling time of each media
// frame, the gateway's CPU share, and memory per call.
//
// "No frame later than 20 ms" is judged on the gateway's own stalls: an idle sentinel process
// (bench/stall-sentinel.ts) records the moments the whole machine stood still (this VM's host pauses it for 20 to
// 60 ms about twice a minute; see bench/stalls.ts), and only the part of a gateway stall the sentinel did not
// share counts. The raw loop maximum and the machine's pauses are reported beside it.
//
// `CARRIER_BENCH_PROFILE=DIR` profiles each measurement window and prints where the CPU went by stage (cpu-stages.ts).
import { join } from 'node:path'
import { monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks'
import { sharedVadBatcher } from '../pipeline/vad/vad-batcher.js'
import { sileroFrameSamples } from '../pipeline/vad/silero-model.js'
import { cpuMs, fmt, type BenchOptions, type BenchRow } from './bench-util.js'
import { StallRecorder, uncovered } from './stalls.js'
import { startProfile, stageTable } from './cpu-stages.js'
import { ask, CARRIER_NUMBER, PUBLIC_URL, startBenchGateway, startSentinel } from './carrier-bench-setup.js'

const SECONDS = Number(process.env.CARRIER_BENCH_SECONDS ?? 10)
const COUNTS = (process.env.CARRIER_BENCH_CALLS ?? '50,100,200,300').split(',').map(Number)
/** `1`: the organization records its calls (issue 14's cost per call: run with and without). */
const RECORDING = process.env.CARRIER_BENCH_RECORDING === '1'
/** A folder: a CPU profile of each measurement window is written there and its stages printed (cpu-stages.ts). */
const PROFILE_DIR = process.env.CARRIER_BENCH_PROFILE

async function run(calls: number): Promise<BenchRow> {
  const frameTimes: number[] = []
  const { world, gateway, close } = await startBenchGateway({ recording: RECORDING, frameTiming: (ms) => frameTimes.push(ms) })
  const progress = (m: string) => process.stderr.write(`[carrier-calls ${calls}] ${m}\n`)
  // Memory per call: JS heap plus memory outside it (buffers, sockets) with the calls live, minus the same once
  // they have hung up; after a GC when --expose-gc allows one.
  const gc = (globalThis as { gc?: () => void }).gc
  const used = () => {
    gc?.()
    const m = process.memoryUsage()
    return m.heapUsed + m.external
  }
  await ask(world, 'connected', { cmd: 'call', calls, gatewayUrl: gateway.url, number: CARRIER_NUMBER, publicUrl: PUBLIC_URL })
  progress('calls connected')
  await new Promise((r) => setTimeout(r, 1000))
  frameTimes.length = 0
  const sentinel = await startSentinel()
  const stalls = new StallRecorder()
  const loop = monitorEventLoopDelay({ resolution: 1 })
  loop.enable()
  stalls.start()
  // GC pauses are what used to break the 20 ms rule (see the README); report the longest so a regression shows.
  let gcMax = 0
  const gcWatch = new PerformanceObserver((list) => {
    for (const e of list.getEntries() as PerformanceEntry[]) gcMax = Math.max(gcMax, e.duration)
  })
  gcWatch.observe({ entryTypes: ['gc'] })
  const turns0 = (await ask(world, 'turns', { cmd: 'turns' })).turns as number
  const vad0 = sharedVadBatcher().stats.frames
  const profileFile =
    PROFILE_DIR === undefined ? undefined : join(PROFILE_DIR, `carrier-calls-${calls}${RECORDING ? '-recording' : ''}.cpuprofile`)
  const profiler = profileFile === undefined ? undefined : await startProfile(profileFile)
  const c0 = cpuMs()
  const t0 = performance.now()
  await new Promise((r) => setTimeout(r, SECONDS * 1000))
  const cpu = cpuMs() - c0
  const wall = performance.now() - t0
  const profile = await profiler?.stop()
  if (profile !== undefined) progress(`CPU by stage (profile in ${profileFile}):\n${stageTable(profile)}`)
  // Frames the model actually ran (a VAD that falls behind skips frames as silence): should be ~100%.
  const vadShare = (100 * (sharedVadBatcher().stats.frames - vad0)) / (((calls * 8000) / sileroFrameSamples(8000)) * (wall / 1000))
  loop.disable()
  gcWatch.disconnect()
  const own = stalls.stop()
  const turns = (await ask(world, 'turns', { cmd: 'turns' })).turns - turns0
  const machine = await sentinel.report()
  // The timer runs every 1 ms, so a gap of g ms means the loop was g - 1 ms late.
  const worstOwnMs = Math.max(0, ...own.map((s) => uncovered(s, machine) - 1))
  const machineMaxMs = Math.max(0, ...machine.map((s) => s.to - s.from - 1))
  const memLive = used()
  progress('measured; hanging up')
  await ask(world, 'done', { cmd: 'hangup' })
  await new Promise((r) => setTimeout(r, 1000))
  const memPerCall = (memLive - used()) / calls / 1024 / 1024
  await close()
  frameTimes.sort((a, b) => a - b)
  const maxLateMs = loop.max / 1e6
  const machineNote = machine.filter((s) => s.to - s.from > 10).length
  return {
    calls,
    recording: RECORDING ? 'on' : 'off',
    'frames handled': frameTimes.length,
    'frame handling p99 ms': fmt(frameTimes[Math.floor(frameTimes.length * 0.99)] ?? 0),
    'loop delay p99 ms': fmt(loop.percentile(99) / 1e6),
    'loop delay max ms': fmt(maxLateMs),
    'machine pauses > 10 ms': machineNote,
    'longest machine pause ms': fmt(machineMaxMs),
    'worst gateway delay ms': fmt(worstOwnMs),
    'no frame later than 20 ms': worstOwnMs <= 20 ? 'yes' : 'no',
    'longest GC pause ms': fmt(gcMax),
    'CPU % of one core': fmt((100 * cpu) / wall),
    'VAD frames run %': fmt(vadShare),
    'turns per call per min': fmt(turns / calls / (wall / 60000)),
    'MB per call (heap+external)': fmt(memPerCall),
  }
}

/** Runs each call count in turn; the last "yes" row is the figure. */
export async function bench(_: BenchOptions): Promise<BenchRow[]> {
  const rows: BenchRow[] = []
  for (const n of COUNTS) rows.push(await run(n))
  return rows
}
