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
// `CARRIER_BENCH_PROFILE=DIR` profiles each measurement window and prints where the CPU went by stage (cpu-stages.ts);
// `CARRIER_BENCH_PROFILE_US` sets its sampling interval (default 1000 us). `CARRIER_BENCH_STALLS=1` explains each
// stall over 10 ms (load-window.ts).
// `CARRIER_BENCH_WORLD_PROFILE=DIR` profiles the world process (the phones and vendor fakes share this machine's two
// cores with the gateway, so what they spend is time the gateway may not get).
import { join } from 'node:path'
import { fmt, type BenchOptions, type BenchRow } from './bench-util.js'
import { ask, CARRIER_NUMBER, PUBLIC_URL, startBenchGateway, startSentinel } from './carrier-bench-setup.js'
import { measureLoad, usedMemory } from './load-window.js'

const SECONDS = Number(process.env.CARRIER_BENCH_SECONDS ?? 10)
const COUNTS = (process.env.CARRIER_BENCH_CALLS ?? '50,100,200,300').split(',').map(Number)
/** `1`: the organization records its calls (the cost of recording a call: run with and without). */
const RECORDING = process.env.CARRIER_BENCH_RECORDING === '1'
/** A folder: a CPU profile of each measurement window is written there and its stages printed. */
const PROFILE_DIR = process.env.CARRIER_BENCH_PROFILE

async function run(calls: number): Promise<BenchRow> {
  const frameTimes: number[] = []
  const { world, gateway, close } = await startBenchGateway({ recording: RECORDING, frameTiming: (ms) => frameTimes.push(ms) })
  const progress = (m: string) => process.stderr.write(`[carrier-calls ${calls}] ${m}\n`)
  await ask(world, 'connected', { cmd: 'call', calls, gatewayUrl: gateway.url, number: CARRIER_NUMBER, publicUrl: PUBLIC_URL })
  progress('calls connected')
  const sentinel = await startSentinel()
  await new Promise((r) => setTimeout(r, 1000))
  frameTimes.length = 0
  const profile =
    PROFILE_DIR === undefined ? undefined : join(PROFILE_DIR, `carrier-calls-${calls}${RECORDING ? '-recording' : ''}.cpuprofile`)
  const load = await measureLoad(
    calls,
    SECONDS,
    async () => (await ask(world, 'turns', { cmd: 'turns' })).turns as number,
    sentinel,
    profile,
  )
  const frames = frameTimes.length
  frameTimes.sort((a, b) => a - b)
  // Memory per call: the calls live, minus the same once they have hung up.
  const memLive = usedMemory()
  progress('measured; hanging up')
  await ask(world, 'done', { cmd: 'hangup' })
  await new Promise((r) => setTimeout(r, 1000))
  const memPerCall = (memLive - usedMemory()) / calls / 1024 / 1024
  await close()
  return {
    calls,
    recording: RECORDING ? 'on' : 'off',
    'frames handled': frames,
    'frame handling p99 ms': fmt(frameTimes[Math.floor(frames * 0.99)] ?? 0),
    ...load,
    'MB per call (heap+external)': fmt(memPerCall),
  }
}

/** Runs each call count in turn; the last "yes" row is the figure. */
export async function bench(_: BenchOptions): Promise<BenchRow[]> {
  const rows: BenchRow[] = []
  for (const n of COUNTS) rows.push(await run(n))
  return rows
}
