// Concurrent SIP calls against one gateway process, the carrier-calls benchmark's twin: the same gateway in this
// process (SIP on, a trunk for 127.0.0.1), the same speech-vendor fakes and backend in the world process, the same
// phrase said in a loop so VAD, STT and the agent's turns run, and the same measured stretch and columns
// (bench/load-window.ts). Each call is a real SIP dialog over UDP with 20 ms RTP both ways. Who places the calls:
//
// - `SIP_BENCH_DRIVER=node` (the default): the world process, with the tests' SIP caller (the transport's own
//   codecs build its messages; one Node timer per call paces its RTP). Its RTP receive gaps are reported too.
// - `SIP_BENCH_DRIVER=sipp`: sipp (Debian's sip-tester) plays test/sip/fixtures/sipp/uac-rtp.xml, the phrase as a
//   PCMU WAV through rtp_stream, each call lasting the whole measured stretch; sipp's own statistics count the
//   failed calls (the SIP load run: 100 calls, 0 failed).
//
// SIP_BENCH_SRTP says with which media each call count runs: `off` (plain RTP over UDP signalling), `on` (a secure
// trunk: `media_encryption: required`, SIP over TLS, SDES-keyed SRTP both ways; Node phones only, sipp has no
// SRTP), or `off,on` (the default with Node phones: both, one after the other, for the table beside carrier-calls).
// SIP_BENCH_CN says whether the Node phones offer comfort noise (RFC 3389), so the agent's pauses are one CN packet a
// second instead of 50 silence packets: `off`, `on`, or `off,on` (the default: each media run both ways). The
// worst RTP gap is not reported with CN: a pause is then a gap of a second by design.
//
// Either way the load generator is another process at a lower priority, and its CPU is reported beside the
// gateway's. Calls are dialled at SIP_BENCH_RATE calls a second (8 by default): the trunk is one source address,
// and the gateway's flood limit lets one address send 20 requests a second.
import { join } from 'node:path'
import { setPriority } from 'node:os'
import { rmSync } from 'node:fs'
import { selfSignedCertificate } from '../test/helpers/tls-cert.js'
import { readSippStats, runSipp, sippMissing, sippRunFolder, sippScenario, type SippRun } from '../test/helpers/sipp.js'
import { fmt, type BenchOptions, type BenchRow } from './bench-util.js'
import { ask, CARRIER_NUMBER, startBenchGateway, startSentinel, type BenchGateway } from './carrier-bench-setup.js'
import { measureLoad, usedMemory } from './load-window.js'
import { cpuMsOf } from './proc-stats.js'

const SECONDS = Number(process.env.SIP_BENCH_SECONDS ?? 10)
const COUNTS = (process.env.SIP_BENCH_CALLS ?? '50,100,200,300').split(',').map(Number)
const DRIVER = process.env.SIP_BENCH_DRIVER ?? 'node'
const SRTP_MODES = (process.env.SIP_BENCH_SRTP ?? (DRIVER === 'sipp' ? 'off' : 'off,on')).split(',')
const CN_MODES = (process.env.SIP_BENCH_CN ?? (DRIVER === 'sipp' ? 'off' : 'off,on')).split(',')
/** Calls dialled per second: INVITE and ACK each, and later a BYE each, inside the flood limit of 20 a second. */
const RATE = Number(process.env.SIP_BENCH_RATE ?? 8)
/** A folder: a CPU profile of each measurement window is written there and its stages printed (cpu-stages.ts). */
const PROFILE_DIR = process.env.SIP_BENCH_PROFILE
/** sipp's first RTP port; each call takes its own above it ([auto_media_port]). */
const SIPP_MEDIA_PORT = 56_000

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** What a driver adds to the row, and how it ends its calls. */
interface Driver {
  /** The load generator's processes (their CPU is reported). */
  pids(): number[]
  /** The calls that did not connect, or failed later (sipp: by its own count). */
  hangUp(): Promise<{ failed: number; note: string }>
  /** The longest RTP gap the callers heard during the measured stretch, when the driver can tell. */
  rtpGapMs(): Promise<number | undefined>
}

/** The world's own SIP phones (`tls`: over TLS with SRTP, trusting `ca`; `comfortNoise`: they offer CN). */
async function nodeDriver(
  bench: BenchGateway,
  calls: number,
  sipPort: number,
  tls: { port: number; ca: string } | undefined,
  comfortNoise: boolean,
): Promise<Driver> {
  const placed = await ask(bench.world, 'connected', {
    cmd: 'sip-call',
    calls,
    host: '127.0.0.1',
    port: sipPort,
    number: CARRIER_NUMBER,
    requestsPerSecond: 2 * RATE,
    ...(tls === undefined ? {} : { tls }),
    comfortNoise,
  })
  if (placed.failed > 0) throw new Error(`${placed.failed} of ${calls} SIP calls did not connect`)
  return {
    pids: () => [bench.world.pid!],
    async hangUp() {
      await ask(bench.world, 'done', { cmd: 'hangup' })
      return { failed: 0, note: '' }
    },
    rtpGapMs: async () => (await ask(bench.world, 'worstGapMs', { cmd: 'rtp-gaps' })).worstGapMs as number,
  }
}

/** sipp places the calls; each lasts long enough for all to be up through the measured stretch. */
async function sippDriver(bench: BenchGateway, calls: number, sipPort: number): Promise<Driver> {
  if (sippMissing) throw new Error(sippMissing)
  const { dir, statsFile } = sippRunFolder()
  const dialMs = (calls / RATE) * 1000
  // All up after dialMs; then a second's settling, the stretch, and slack for a slow start.
  const callMs = Math.ceil(dialMs + 1000 + SECONDS * 1000 + 5000)
  const args = ['-sf', sippScenario('uac-rtp'), '-s', CARRIER_NUMBER, '-i', '127.0.0.1', '-p', '0']
  args.push('-mi', '127.0.0.1', '-mp', String(SIPP_MEDIA_PORT), '-r', String(RATE), '-l', String(calls), '-m', String(calls))
  args.push('-d', String(callMs), '-trace_stat', '-stf', statsFile, '-fd', '1', '-nostdin', `127.0.0.1:${sipPort}`)
  let sippPid: number | undefined
  let exited: SippRun | undefined
  const run = runSipp(args, { cwd: dir, timeoutMs: 2 * callMs + 60_000, onSpawn: (pid) => (sippPid = pid) }).then((r) => (exited = r))
  // In production the callers are other machines: here sipp shares the cores, so it yields to the gateway.
  if (sippPid !== undefined) setPriority(sippPid, 10)
  const sip = bench.gateway.sip!
  const deadline = performance.now() + dialMs + 30_000
  while (sip.liveCalls < calls) {
    const failure =
      exited !== undefined
        ? `sipp exited (${exited.code}) with ${sip.liveCalls} of ${calls} calls up:\n${exited.output}`
        : performance.now() > deadline
          ? `only ${sip.liveCalls} of ${calls} SIP calls came up`
          : undefined
    if (failure !== undefined) {
      if (sippPid !== undefined && exited === undefined) process.kill(sippPid)
      rmSync(dir, { recursive: true, force: true })
      throw new Error(failure)
    }
    await sleep(100)
  }
  return {
    pids: () => (sippPid === undefined ? [bench.world.pid!] : [bench.world.pid!, sippPid]),
    async hangUp() {
      const result = await run
      const counts = readSippStats(statsFile)
      rmSync(dir, { recursive: true, force: true })
      await ask(bench.world, 'done', { cmd: 'hangup' })
      const failed = counts.failed + (calls - counts.successful - counts.failed)
      return { failed, note: `sipp exit ${result.code}: ${counts.successful} of ${counts.created} calls passed` }
    },
    rtpGapMs: async () => undefined,
  }
}

async function run(calls: number, srtp: boolean, cn: boolean): Promise<BenchRow> {
  const cleanups: (() => unknown)[] = []
  const cert = srtp ? selfSignedCertificate({ teardown: (fn) => cleanups.push(fn) }) : undefined
  const bench = await startBenchGateway({ recording: false, sip: true, ...(cert === undefined ? {} : { srtp: cert }) })
  const sipPort = bench.gateway.sip?.port
  if (sipPort === undefined) throw new Error('the bench gateway started without SIP')
  const tlsPort = bench.gateway.sip?.tlsPort
  if (srtp && tlsPort === undefined) throw new Error('the bench gateway started without TLS')
  const progress = (m: string) => process.stderr.write(`[sip-calls ${DRIVER} ${calls}${srtp ? ' srtp' : ''}${cn ? ' cn' : ''}] ${m}\n`)
  const tls = cert === undefined || tlsPort === undefined ? undefined : { port: tlsPort, ca: cert.cert }
  const driver = DRIVER === 'sipp' ? await sippDriver(bench, calls, sipPort) : await nodeDriver(bench, calls, sipPort, tls, cn)
  progress('calls connected')
  const sentinel = await startSentinel()
  await sleep(1000)
  await driver.rtpGapMs()
  const pids = driver.pids()
  const driverCpu0 = pids.reduce((n, pid) => n + cpuMsOf(pid), 0)
  const t0 = performance.now()
  const profile =
    PROFILE_DIR === undefined
      ? undefined
      : join(PROFILE_DIR, `sip-calls-${calls}-${DRIVER}${srtp ? '-srtp' : ''}${cn ? '-cn' : ''}.cpuprofile`)
  const load = await measureLoad(
    calls,
    SECONDS,
    async () => (await ask(bench.world, 'turns', { cmd: 'turns' })).turns as number,
    sentinel,
    profile,
  )
  const driverShare = (100 * (pids.reduce((n, pid) => n + cpuMsOf(pid), 0) - driverCpu0)) / (performance.now() - t0)
  const gap = await driver.rtpGapMs()
  const memLive = usedMemory()
  progress('measured; hanging up')
  const { failed, note } = await driver.hangUp()
  if (note !== '') progress(note)
  await sleep(1000)
  const memPerCall = (memLive - usedMemory()) / calls / 1024 / 1024
  await bench.close()
  for (const cleanup of cleanups) cleanup()
  return {
    calls,
    driver: DRIVER,
    media: srtp ? 'SRTP (TLS)' : 'RTP',
    'peer offers CN': cn ? 'yes' : 'no',
    'failed calls': failed,
    ...load,
    'worst RTP gap heard ms': gap === undefined || cn ? '' : fmt(gap),
    'load generator CPU % (with fakes)': fmt(driverShare),
    'MB per call (heap+external)': fmt(memPerCall),
  }
}

/** Runs each call count in turn, each with every SRTP mode; the last row with 0 failed calls and "yes" is the figure. */
export async function bench(_: BenchOptions): Promise<BenchRow[]> {
  if (DRIVER !== 'node' && DRIVER !== 'sipp') throw new Error(`SIP_BENCH_DRIVER must be node or sipp, got "${DRIVER}"`)
  if (!SRTP_MODES.every((m) => m === 'off' || m === 'on')) throw new Error(`SIP_BENCH_SRTP must be off, on or off,on, got "${SRTP_MODES}"`)
  if (DRIVER === 'sipp' && SRTP_MODES.includes('on')) throw new Error('sipp has no SRTP: SIP_BENCH_SRTP=on needs SIP_BENCH_DRIVER=node')
  if (!CN_MODES.every((m) => m === 'off' || m === 'on')) throw new Error(`SIP_BENCH_CN must be off, on or off,on, got "${CN_MODES}"`)
  if (DRIVER === 'sipp' && CN_MODES.includes('on'))
    throw new Error('the sipp scenario offers no CN: SIP_BENCH_CN=on needs SIP_BENCH_DRIVER=node')
  const rows: BenchRow[] = []
  for (const n of COUNTS) for (const mode of SRTP_MODES) for (const cn of CN_MODES) rows.push(await run(n, mode === 'on', cn === 'on'))
  return rows
}
