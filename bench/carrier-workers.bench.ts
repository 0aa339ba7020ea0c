// The carrier-calls load against `voxgate serve --workers N` as a child process tree, N = 1 and 2 by default,
// measured from outside: what each worker's /metrics says over the window (turn latency, VAD frames run and
// skipped, the calls it holds), the CPU of the primary and each worker from /proc, the world's turns and frames.
//
// Unlike carrier-calls, nothing here runs inside the gateway, so there is no frame timing or stall sentinel; the
// event-loop figure is prom-client's p99 since the worker started. The phones, vendor fakes and backend (the
// "world", bench/carrier-world.ts, at nice 10 as in carrier-calls) and Postgres run on the same cores as the
// gateway: on a 2-core machine two workers compete with them, which is why the world's and Postgres's CPU and the
// audio the phones managed to send are reported beside the gateway's.
//
// Env: DATABASE_URL (required: workers share a Postgres server), CARRIER_BENCH_CALLS (50,100,150),
// CARRIER_BENCH_WORKERS (1,2), CARRIER_BENCH_SECONDS (15). Each call count runs every worker count in turn.
import { fork, type ChildProcess } from 'node:child_process'
import { setPriority } from 'node:os'
import { fileURLToPath } from 'node:url'
import { sileroFrameSamples } from '../pipeline/vad/silero-model.js'
import { fmt, type BenchOptions, type BenchRow } from './bench-util.js'
import { apiClient, ask, benchDatabase, CARRIER_NUMBER, PUBLIC_URL, setUpCarrierAgent } from './carrier-bench-setup.js'
import { cpuMsOf, machineCpu, pidsNamed } from './proc-stats.js'
import { startServeTree, type ServeTree } from './serve-tree.js'
import { histogram, histogramDelta, histogramSum, scrapeEveryWorker, shareAbove, type Samples } from './worker-metrics.js'

const SECONDS = Number(process.env.CARRIER_BENCH_SECONDS ?? 15)
const COUNTS = (process.env.CARRIER_BENCH_CALLS ?? '50,100,150').split(',').map(Number)
const WORKERS = (process.env.CARRIER_BENCH_WORKERS ?? '1,2').split(',').map(Number)
/** Carrier media frames are 20 ms of 8 kHz audio. */
const FRAME_SAMPLES = 160

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0)

/** CPU ms of each pid now; pids that are gone read NaN and drop out of a delta. */
function cpuOf(pids: readonly number[]): number[] {
  return pids.map(cpuMsOf)
}

function cpuDelta(before: readonly number[], after: readonly number[]): number[] {
  return after.map((a, i) => a - before[i]!).map((d) => (Number.isFinite(d) ? d : 0))
}

/** A counter's growth on each worker, summed. */
function counterDelta(before: Map<number, Samples>, after: Map<number, Samples>, series: string): number {
  return sum([...after].map(([pid, s]) => (s.get(series) ?? 0) - (before.get(pid)?.get(series) ?? 0)))
}

/**
 * Latency stages that are the gateway's own hops (one handler from the event before), and those that wait on the
 * world (STT, the backend, TTS, the phone's mark). A waiting stage also holds any wait for the gateway's event
 * loop to read the answer, so it does not acquit the gateway; but an own-stage sum that stays small says the
 * gateway's handlers did not get slower.
 */
const OWN_STAGES = ['webhook_sent', 'reply_first_text', 'tts_request', 'first_frame_out']
const WORLD_STAGES = ['transcript_final', 'reply_first_byte', 'tts_first_audio', 'first_audio_heard']

/** The mean duration of each of `stages` over the window (all workers), summed, ms. */
function stageMeansMs(before: Map<number, Samples>, after: Map<number, Samples>, stages: readonly string[]): number {
  const mean = (stage: string) => {
    const series = (part: string) => `voxgate_turn_stage_duration_seconds_${part}{stage="${stage}"}`
    const count = counterDelta(before, after, series('count'))
    return count === 0 ? 0 : (1000 * counterDelta(before, after, series('sum'))) / count
  }
  return sum(stages.map(mean))
}

async function run(calls: number, workers: number, databaseUrl: string): Promise<BenchRow> {
  const progress = (m: string) => process.stderr.write(`[carrier-workers ${calls} calls, ${workers} workers] ${m}\n`)
  const world: ChildProcess = fork(fileURLToPath(new URL('./carrier-world.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    stdio: 'inherit',
  })
  // As in carrier-calls: in production the carrier and the vendors are other machines.
  if (world.pid !== undefined) setPriority(world.pid, 10)
  let serve: ServeTree | undefined
  let hungUp = false
  try {
    const urls = await ask(world, 'ready')
    serve = await startServeTree(workers, {
      DATABASE_URL: databaseUrl,
      PUBLIC_URL,
      ALLOW_INSECURE_WEBHOOKS: '1',
      STT_VENDOR_A_URL: urls.deepgram,
      STT_VENDOR_A_API_KEY: 'k',
      TTS_VENDOR_A_URL: urls.elevenlabs,
      TTS_VENDOR_A_API_KEY: 'k',
      SHUTDOWN_GRACE_MS: '2000',
    })
    progress(`serving (pids ${[serve.pid, ...serve.servingPids.filter((p) => p !== serve!.pid)].join(', ')})`)
    await unlimited(databaseUrl)
    await setUpCarrierAgent(apiClient(serve.url, serve.apiKey), urls.backend)
    await ask(world, 'connected', { cmd: 'call', calls, gatewayUrl: serve.url, number: CARRIER_NUMBER, publicUrl: PUBLIC_URL })
    progress('calls connected')
    await sleep(1000)

    const before = await scrapeEveryWorker(serve.url, serve.servingPids)
    const tree = workers === 1 ? [serve.pid] : [serve.pid, ...serve.servingPids]
    const postgres = pidsNamed('postgres')
    const w0 = await ask(world, 'turns', { cmd: 'turns' })
    const snapshot = () => ({ tree: cpuOf(tree), world: cpuOf([world.pid!]), postgres: cpuOf(postgres), machine: machineCpu() })
    const c0 = snapshot()
    const t0 = performance.now()
    await sleep(SECONDS * 1000)
    const c1 = snapshot()
    const wall = performance.now() - t0
    const w1 = await ask(world, 'turns', { cmd: 'turns' })
    const after = await scrapeEveryWorker(serve.url, serve.servingPids)
    progress('measured; hanging up')
    await ask(world, 'done', { cmd: 'hangup' })
    hungUp = true

    const pct = (ms: number) => fmt((100 * ms) / wall)
    const perProcess = cpuDelta(c0.tree, c1.tree)
    const frames = w1.frames - w0.frames
    const vadRun = counterDelta(before, after, 'voxgate_vad_batch_size_sum')
    const latency = histogramSum(
      [...after].map(([pid, s]) =>
        histogramDelta(histogram(before.get(pid)!, 'voxgate_turn_latency_seconds'), histogram(s, 'voxgate_turn_latency_seconds')),
      ),
    )
    const machineTotal = c1.machine.totalMs - c0.machine.totalMs
    return {
      calls,
      workers,
      'calls per worker': serve.servingPids.map((p) => after.get(p)!.get('voxgate_live_sessions{channel="carrier"}') ?? 0).join(' + '),
      'gateway CPU % of one core': pct(sum(perProcess)),
      // The primary first when there is one: it only hands out connections.
      'per process CPU %': perProcess.map(pct).join(' + '),
      'world CPU %': pct(sum(cpuDelta(c0.world, c1.world))),
      'Postgres CPU %': pct(sum(cpuDelta(c0.postgres, c1.postgres))),
      'machine busy % of all cores': fmt((100 * (c1.machine.busyMs - c0.machine.busyMs)) / machineTotal),
      'steal %': fmt((100 * (c1.machine.stealMs - c0.machine.stealMs)) / machineTotal),
      // Below 100: the world, starved of CPU, sent less than real time (and the gateway got less to do).
      'audio sent % of real time': fmt((100 * frames) / (calls * 50 * (wall / 1000))),
      // Of the audio that arrived, the share the VAD model ran on; the rest it skipped as silence, falling behind.
      'VAD frames run %': fmt((100 * vadRun) / ((frames * FRAME_SAMPLES) / sileroFrameSamples(8000))),
      'VAD frames skipped': counterDelta(before, after, 'voxgate_vad_skipped_frames_total'),
      turns: latency.count,
      'turn latency mean ms': fmt((1000 * latency.sum) / Math.max(latency.count, 1)),
      'own stages mean ms': fmt(stageMeansMs(before, after, OWN_STAGES)),
      'waiting stages mean ms': fmt(stageMeansMs(before, after, WORLD_STAGES)),
      'turns over 250 ms %': fmt(100 * shareAbove(latency, 0.25)),
      'turns over 500 ms %': fmt(100 * shareAbove(latency, 0.5)),
      'turns per call per min': fmt((w1.turns - w0.turns) / calls / (wall / 60000)),
      'loop lag p99 ms (since start, worst worker)': fmt(
        1000 * Math.max(...[...after.values()].map((s) => s.get('nodejs_eventloop_lag_p99_seconds') ?? 0)),
      ),
    }
  } finally {
    if (!hungUp && world.exitCode === null) world.kill()
    await serve?.stop()
  }
}

/**
 * No concurrency limit on the default organization (it has one out of the box), and CARRIER_NUMBER reserved for it
 * (what the operator's PUT /admin/v1/organizations/{id}/phone_numbers/{number} does), so its agent may claim it.
 */
async function unlimited(databaseUrl: string): Promise<void> {
  const pg = (await import('pg')).default
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    await client.query('update organizations set max_concurrent_sessions = null')
    await client.query(
      'insert into phone_number_reservations (phone_number, organization_id) select $1, id from organizations on conflict do nothing',
      [CARRIER_NUMBER],
    )
  } finally {
    await client.end()
  }
}

/** Every call count with every worker count, alternating, so a machine that drifts affects both alike. */
export async function bench(_: BenchOptions): Promise<BenchRow[]> {
  if (!process.env.DATABASE_URL) {
    // Not an error, so that `npm run bench` without a server still runs everything else.
    console.log('skipped: set DATABASE_URL (workers share a Postgres server)')
    return []
  }
  const rows: BenchRow[] = []
  for (const calls of COUNTS) {
    for (const workers of WORKERS) {
      // A fresh database each run: no sessions or turns of the run before.
      rows.push(await run(calls, workers, (await benchDatabase())!))
    }
  }
  return rows
}
