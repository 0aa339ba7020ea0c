// The soak: SOAK_CALLS (100) phone calls with turns, live at all times on one gateway process for SOAK_MINUTES
// (60), each hanging up after 30-120 s and replaced by a new one, so sessions, leases and sockets come and go all
// the time. Samples every SOAK_SAMPLE_SECONDS (60): resident memory, heap, memory outside the heap, open
// handles, live sessions, the gateway's own worst event-loop delay (machine pauses the stall sentinel shared
// taken out, as in carrier-calls), turns. At the end every call hangs up and the bench checks that nothing
// leaked: no session left live in the process or unended in the database, no lease held, handles back to where
// they were before the first call. The verdict row: RSS growth after the first ten minutes (target < 5%), the
// 20 ms rule, leaks. Run: `DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench -- soak`.
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'
import { fmt, type BenchOptions, type BenchRow } from './bench-util.js'
import { type Stall, sharedNow, StallRecorder, uncovered } from './stalls.js'
import { sharedVadBatcher } from '../pipeline/vad/vad-batcher.js'
import { ask, CARRIER_NUMBER, PUBLIC_URL, startBenchGateway, startSentinel } from './carrier-bench-setup.js'

const MINUTES = Number(process.env.SOAK_MINUTES ?? 60)
const CALLS = Number(process.env.SOAK_CALLS ?? 100)
const SAMPLE_S = Number(process.env.SOAK_SAMPLE_SECONDS ?? 60)
/** RSS is judged from this minute on (start-up, JIT and pools have settled). */
const SETTLED_MINUTE = Math.min(10, MINUTES / 2)
const MB = 1024 * 1024
/** Names of the GC entry kinds (perf_hooks constants). */
const GC_KINDS = new Map<number, string>([
  [constants.NODE_PERFORMANCE_GC_MINOR, 'minor'],
  [constants.NODE_PERFORMANCE_GC_MAJOR, 'major'],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 'incremental'],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, 'weakcb'],
])

/** Handles the event loop holds (sockets, timers, servers): Node's own count of active resources. */
function openHandles(): number {
  return process.getActiveResourcesInfo().length
}

/** Active resources by kind (TCPSocketWrap, Timeout, ...): pools' idle sockets stay, a leak grows with calls. */
function handleKinds(): string {
  const counts = new Map<string, number>()
  for (const k of process.getActiveResourcesInfo()) counts.set(k, (counts.get(k) ?? 0) + 1)
  return [...counts].map(([k, n]) => `${k} ${n}`).join(', ')
}

export async function bench(_: BenchOptions): Promise<BenchRow[]> {
  // Per sample: the slowest media frame's synchronous handling and the longest GC pause (maxima, not lists: an
  // hour at 100 calls is 18 million frames).
  let frameMax = 0
  let gcMax = 0
  const { world, gateway, store, close } = await startBenchGateway({
    recording: false,
    frameTiming: (ms) => {
      if (ms > frameMax) frameMax = ms
    },
  })
  let gcMaxKind = ''
  // This sample's GC pauses on the shared clock, to tell how much of the worst delay was a collection (bounded: a
  // minute holds about 150 scavenges and 12 full collections).
  const gcPauses: Stall[] = []
  const gcWatch = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const from = performance.timeOrigin + e.startTime
      if (gcPauses.length < 10_000) gcPauses.push({ from, to: from + e.duration })
      if (e.duration <= gcMax) continue
      gcMax = e.duration
      gcMaxKind = GC_KINDS.get((e as { detail?: { kind?: number } }).detail?.kind ?? 0) ?? '?'
    }
  })
  gcWatch.observe({ entryTypes: ['gc'] })
  const progress = (m: string) => process.stderr.write(`[soak] ${m}\n`)
  const db = store.db
  const sentinel = await startSentinel()
  const handlesBefore = openHandles()
  await ask(world, 'churning', {
    cmd: 'churn',
    calls: CALLS,
    gatewayUrl: gateway.url,
    number: CARRIER_NUMBER,
    publicUrl: PUBLIC_URL,
    minLifeMs: 30_000,
    maxLifeMs: 120_000,
  })
  const rows: BenchRow[] = []
  const t0 = performance.now()
  let turnsBefore = 0
  let vadBefore = { ...sharedVadBatcher().stats }
  let worstOwnMs = 0
  const rss: { minute: number; mb: number }[] = []
  for (let i = 1; i * SAMPLE_S <= MINUTES * 60; i++) {
    const loop = monitorEventLoopDelay({ resolution: 1 })
    const stalls = new StallRecorder()
    const from = sharedNow()
    frameMax = 0
    gcMax = 0
    gcPauses.length = 0
    gcMaxKind = ''
    loop.enable()
    stalls.start()
    await new Promise((r) => setTimeout(r, SAMPLE_S * 1000))
    loop.disable()
    const own = stalls.stop()
    const machine = await sentinel.since(from)
    let ownMs = 0
    let worst: Stall | undefined
    for (const s of own) {
      const ms = uncovered(s, machine) - 1
      if (ms > ownMs) {
        ownMs = ms
        worst = s
      }
    }
    // Of the worst delay, the part V8 spent collecting; the rest is our code, or callbacks a collection queued.
    const gcInWorst = worst === undefined ? 0 : worst.to - worst.from - uncovered(worst, gcPauses)
    const minuteNow = (performance.now() - t0) / 60_000
    // Judged once settled, as memory is: the first samples hold start-up (model load, JIT, pools).
    if (minuteNow >= SETTLED_MINUTE) worstOwnMs = Math.max(worstOwnMs, ownMs)
    const { stats } = (await ask(world, 'stats', { cmd: 'stats' })) as { stats: Record<string, number> }
    const m = process.memoryUsage()
    const minute = minuteNow
    // Model calls: each returns its outputs in buffers that V8 tracks with a weak handle until a full GC.
    const vad = { ...sharedVadBatcher().stats }
    const batches = vad.batches - vadBefore.batches
    rss.push({ minute, mb: m.rss / MB })
    const row: BenchRow = {
      minute: fmt(minute),
      'RSS MB': fmt(m.rss / MB),
      'heap MB': fmt(m.heapUsed / MB),
      'external MB': fmt(m.external / MB),
      'open handles': openHandles(),
      'live sessions': gateway.sessions.live.size,
      'calls placed': stats.placed ?? 0,
      'not connected': stats.failed ?? 0,
      'ended by gateway': stats.endedByGateway ?? 0,
      'turns in sample': (stats.turns ?? 0) - turnsBefore,
      'worst gateway delay ms': fmt(ownMs),
      'GC in it ms': fmt(gcInWorst),
      'loop delay max ms': fmt(loop.max / 1e6),
      'slowest frame ms': fmt(frameMax),
      'VAD calls / s': fmt(batches / SAMPLE_S),
      'frames per VAD call': fmt(batches === 0 ? 0 : (vad.frames - vadBefore.frames) / batches),
      'longest GC ms': `${fmt(gcMax)} ${gcMaxKind}`,
    }
    turnsBefore = stats.turns ?? 0
    vadBefore = vad
    rows.push(row)
    progress(JSON.stringify(row))
  }

  gcWatch.disconnect()
  progress('hanging up')
  await ask(world, 'done', { cmd: 'hangup' })
  // Let the last session.end webhooks and socket closes settle.
  await new Promise((r) => setTimeout(r, 5000))
  const unended = await db
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '!=', 'ended')
    .executeTakeFirstOrThrow()
  const leases = await db
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('lease_expires_at', '>', new Date())
    .where('status', '!=', 'ended')
    .executeTakeFirstOrThrow()
  const handlesAfter = openHandles()
  const settled = rss.filter((r) => r.minute >= SETTLED_MINUTE)
  const base = settled[0]?.mb ?? 0
  const last = settled.at(-1)?.mb ?? 0
  const peak = Math.max(0, ...settled.map((r) => r.mb))
  const growth = base === 0 ? 0 : (100 * (last - base)) / base
  rows.push({
    minute: `verdict (${MINUTES} min, ${CALLS} calls)`,
    'RSS MB': `${fmt(base)} at min ${fmt(settled[0]?.minute ?? 0)} -> ${fmt(last)} (peak ${fmt(peak)})`,
    'RSS growth after settling %': fmt(growth),
    'RSS flat (< 5%)': growth < 5 ? 'yes' : 'no',
    'no frame later than 20 ms (settled)': worstOwnMs <= 20 ? 'yes' : 'no',
    'worst gateway delay ms (settled)': fmt(worstOwnMs),
    'live sessions after hang-up': gateway.sessions.live.size,
    'unended sessions in db': Number(unended.n),
    'leases held': Number(leases.n),
    'open handles before / after': `${handlesBefore} / ${handlesAfter}`,
    'handles after by kind': handleKinds(),
  })
  await close()
  await sentinel.report()
  return rows
}
