// The SIP media path alone, the hot path of a SIP call: N calls' RtpMedia (transports/sip/rtp-media.ts) in this
// process on real UDP sockets, each receiving a 20 ms PCMU packet every 20 ms from a phone in another process
// (bench/sip-media-peer.ts) and sending one back every 20 ms (G.711 silence, as a quiet agent's call does), with RTCP
// and the jitter buffer as in a call; the caller's frames are counted, nothing else is done with them. Plain RTP and
// SDES-SRTP (AES_CM_128_HMAC_SHA1_80 both ways). What it reports is this process's CPU per call: the part of
// `sip-calls`' CPU per call that is SIP's own, without the pipeline (VAD, STT, turns) that every channel shares.
//
// SIP_MEDIA_BENCH_CALLS (default 100,200) and SIP_MEDIA_BENCH_SECONDS (default 8) set the counts and the window.
import { fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { RtpMedia } from '../transports/sip/media/rtp-media.js'
import { RtpPortPool } from '../transports/sip/media/rtp-port-pool.js'
import type { NegotiatedAudio } from '../transports/sip/media/sdp-offer-answer.js'
import { fmt, type BenchOptions, type BenchRow } from './bench-util.js'

const COUNTS = (process.env.SIP_MEDIA_BENCH_CALLS ?? '100,200').split(',').map(Number)
const SECONDS = Number(process.env.SIP_MEDIA_BENCH_SECONDS ?? 8)
const PEER = fileURLToPath(new URL('./sip-media-peer.ts', import.meta.url))
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function run(calls: number, srtp: boolean): Promise<BenchRow> {
  const pool = new RtpPortPool({ host: '127.0.0.1', min: 46_000, max: 46_000 + 4 * calls + 8 })
  const leases = []
  for (let i = 0; i < calls; i++) {
    const lease = await pool.acquire()
    if (lease === null) throw new Error('no RTP port left in 46000..')
    leases.push(lease)
  }
  // One key per direction per call: the phone protects with `remote`, we with `local`.
  const keys = leases.map(() => (srtp ? { local: randomBytes(30), remote: randomBytes(30) } : undefined))
  const peer = fork(PEER, [JSON.stringify(leases.map((l, i) => ({ port: l.port, key: keys[i]?.remote.toString('hex') })))], {
    execArgv: ['--import', 'tsx'],
    stdio: 'ignore',
  })
  let frames = 0
  const medias = leases.map((lease, i) => {
    const k = keys[i]
    const audio: NegotiatedAudio = {
      codec: 'PCMU',
      payloadType: 0,
      telephoneEventPayloadType: 101,
      remoteAddress: '127.0.0.1',
      // Where the phone is: learnt from its first packet (symmetric RTP), as behind NAT.
      remotePort: 9,
      remoteDirection: 'sendrecv',
      held: false,
      ...(k === undefined ? {} : { srtp: { suite: 'AES_CM_128_HMAC_SHA1_80' as const, tag: 1, ...k } }),
    }
    const media = new RtpMedia(lease, audio, '127.0.0.1', { onAudio: () => void frames++, onDigit: () => undefined }, { mediaTimeoutMs: 0 })
    media.start()
    return media
  })
  try {
    await sleep(1_500)
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    const frames0 = frames
    await sleep(SECONDS * 1000)
    const cpu = process.cpuUsage(cpu0)
    const ms = performance.now() - t0
    const share = (cpu.user + cpu.system) / 10 / ms
    const latched = medias.filter((m) => m.peer.latched).length
    const unauthenticated = medias.reduce((n, m) => n + m.stats.unauthenticated, 0)
    if (latched < calls || unauthenticated > 0)
      throw new Error(`${latched} of ${calls} streams latched, ${unauthenticated} packets unauthenticated`)
    return {
      calls,
      media: srtp ? 'SRTP' : 'RTP',
      'CPU % of one core': fmt(share),
      'CPU % per call': fmt(share / calls),
      'caller frames handed on, % of 50/s': fmt((100 * (frames - frames0)) / (calls * 50 * (ms / 1000))),
    }
  } finally {
    for (const m of medias) m.close()
    peer.kill()
  }
}

export async function bench(_options: BenchOptions): Promise<BenchRow[]> {
  const rows: BenchRow[] = []
  for (const calls of COUNTS) for (const srtp of [false, true]) rows.push(await run(calls, srtp))
  return rows
}
