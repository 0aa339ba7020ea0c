/**
 * One call's RTCP and media liveness. Every few seconds a compound packet (an SR while we send, else an RR, then
 * an SDES with our CNAME: RFC 3550 section 6.1) goes to the peer: on the RTP port itself when the call
 * multiplexes RTCP (RFC 5761), else from our RTP port + 1 to the peer's RTCP port (its `a=rtcp`, RFC 3605, else
 * its RTP port + 1). The interval is section 6.2's 5 s minimum with section 6.3.1's randomisation (x0.5 to
 * x1.5, divided by e - 3/2), and the first report goes after half of it (section 6.2). Received RTCP is decoded,
 * an SR is kept for our next report block, and a BYE is noted; on close we send our own BYE (section 6.3.7).
 *
 * Liveness: RTP or valid RTCP from the peer's address keeps the call alive; with nothing heard for the media
 * timeout, while the peer declared that it sends (sendrecv and not on hold), `onTimeout` fires once. Packets
 * from any other address neither count nor move where our RTCP goes (the same rule as RTP latching).
 */
import type { RemoteInfo, Socket } from 'node:dgram'
import { decodeRtcp, encodeRtcp, SDES_CNAME } from './rtcp-codec.js'
import { RtcpStatistics } from './rtcp-statistics.js'
import { realTimers, type TimerHandle, type TimerScheduler } from '../timer-scheduler.js'

/** RFC 3550 section 6.2: the minimum mean interval between reports. */
export const RTCP_INTERVAL_MS = 5000
/** Section 6.3.1: the randomised interval is divided by e - 3/2 so the mean stays the nominal one. */
const COMPENSATION = Math.E - 1.5

/** Where the peer takes RTCP, as its SDP says. */
export interface RtcpTarget {
  readonly address: string
  /** Its RTP port: the RTCP port when muxed, else the default RTCP port is this + 1. */
  readonly rtpPort: number
  /** Its `a=rtcp` port, when it gave one. */
  readonly rtcpPort?: number | undefined
  /** Both sides agreed on `a=rtcp-mux`. */
  readonly mux: boolean
}

/** Something that sends a datagram to `address:port` (a dgram socket is one) and never throws. */
export interface DatagramSender {
  send(bytes: Buffer, port: number, address: string): void
}

/** What a session is given. */
export interface RtcpSessionOptions {
  readonly ssrc: number
  /** Our CNAME (section 6.5.1): stable for the call, never a secret. */
  readonly cname: string
  /** Sends on the RTP port (RTCP muxed with RTP goes there): the stream's connected sender, or a socket. */
  readonly rtpSocket: DatagramSender
  /** Our socket on the RTP port + 1 (the pool reserves it); unused when muxed. */
  readonly rtcpSocket?: Socket | undefined
  readonly target: RtcpTarget
  /** The peer declared that it sends (see {@link RtcpSession.update}). */
  readonly peerSends: boolean
  /** Addresses whose RTCP counts before the peer is known (the SDP's and the signalling peer's). */
  readonly latchable: ReadonlySet<string>
  /** No RTP or RTCP for this long ends the call; 0 turns the check off. */
  readonly mediaTimeoutMs: number
  readonly onTimeout?: () => void
  /**
   * SRTCP (RFC 3711 section 3.4) on an SRTP call: `protect` turns our compound packet into SRTCP, `unprotect` the
   * peer's back into RTCP (undefined when it does not authenticate or is a replay: dropped as invalid).
   */
  readonly srtcp?: { protect(packet: Buffer): Buffer; unprotect(packet: Buffer): Buffer | undefined } | undefined
  readonly timers?: TimerScheduler
  readonly now?: () => number
  readonly random?: () => number
}

/** Counters for tests and logs. */
export interface RtcpSessionStats {
  sent: number
  received: number
  invalid: number
  byes: number
}

/** RTCP and the media timeout of one call. */
export class RtcpSession {
  readonly stats: RtcpSessionStats = { sent: 0, received: 0, invalid: 0, byes: 0 }
  readonly statistics = new RtcpStatistics()
  readonly #o: RtcpSessionOptions
  readonly #timers: TimerScheduler
  readonly #now: () => number
  #target: RtcpTarget
  /** Where RTCP goes once the peer's RTCP came from somewhere (NAT): its source. */
  #latched: { address: string; port: number } | undefined
  #report: TimerHandle | undefined
  #watch: TimerHandle | undefined
  #heardAt = 0
  /** The peer declared that it sends (sendrecv, not held): only then does silence mean it is gone. */
  #sends = true
  #watching = false
  #started = false
  #closed = false

  constructor(options: RtcpSessionOptions) {
    this.#o = options
    this.#target = options.target
    this.#sends = options.peerSends
    this.#timers = options.timers ?? realTimers
    this.#now = options.now ?? Date.now
    options.rtcpSocket?.on('message', (bytes, from) => this.receive(bytes, from))
    options.rtcpSocket?.on('error', () => undefined)
  }

  /** Where our next report goes. */
  get destination(): { address: string; port: number } {
    if (this.#latched !== undefined) return this.#latched
    const t = this.#target
    return { address: t.address, port: t.mux ? t.rtpPort : (t.rtcpPort ?? t.rtpPort + 1) }
  }

  /** Starts the reports and, when the peer sends, the media timeout. */
  start(): void {
    if (this.#started || this.#closed) return
    this.#started = true
    this.#heardAt = this.#now()
    this.#schedule(RTCP_INTERVAL_MS / 2)
    this.#watchIf()
  }

  /** A re-INVITE: a new address un-latches, and hold (or unhold) stops (or restarts) the media timeout. */
  update(target: RtcpTarget, peerSends: boolean): void {
    if (target.address !== this.#target.address || target.rtpPort !== this.#target.rtpPort) this.#latched = undefined
    this.#target = target
    this.#sends = peerSends
    // Coming off hold, the peer gets the whole timeout again before it must be heard.
    if (this.#started) this.#heardAt = this.#now()
    this.#watchIf()
  }

  /** The peer is heard: an RTP packet of the latched stream arrived. */
  rtpReceived(packet: { ssrc: number; sequence: number; timestamp: number }): void {
    const now = this.#now()
    this.#heardAt = now
    this.statistics.received(packet, now)
  }

  /** One of our RTP packets left. */
  rtpSent(timestamp: number, payloadBytes: number): void {
    this.statistics.sent(timestamp, payloadBytes, this.#now())
  }

  /** A datagram that looks like RTCP, on either of our ports. */
  receive(bytes: Buffer, from: RemoteInfo): void {
    if (this.#closed) return
    const known = this.#latched?.address
    if (known !== undefined ? unmapped(from.address) !== unmapped(known) : !this.#o.latchable.has(unmapped(from.address))) return
    const clear = this.#o.srtcp === undefined ? bytes : this.#o.srtcp.unprotect(bytes)
    if (clear === undefined) return void this.stats.invalid++
    const decoded = decodeRtcp(clear)
    if (decoded.kind === 'invalid') return void this.stats.invalid++
    this.stats.received++
    const now = this.#now()
    this.#heardAt = now
    // Symmetric RTCP: replies go where the peer's reports come from, as RTP goes where its RTP comes from.
    this.#latched = { address: from.address, port: from.port }
    for (const packet of decoded.packets) {
      if (packet.type === 'sr') this.statistics.receivedSr(packet, now)
      else if (packet.type === 'bye') this.stats.byes++
    }
  }

  /** Stops everything; sends our BYE once when reports went out. Idempotent. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    this.#report?.cancel()
    this.#watch?.cancel()
    if (this.#started) this.#send([{ type: 'bye', ssrcs: [this.#o.ssrc] }])
  }

  #schedule(meanMs: number): void {
    const random = this.#o.random ?? Math.random
    const ms = (meanMs * (0.5 + random())) / COMPENSATION
    this.#report = this.#timers.schedule(ms, () => {
      if (this.#closed) return
      this.#send([])
      this.#schedule(RTCP_INTERVAL_MS)
    })
  }

  /** A compound packet: our report, our CNAME, then `extra` (section 6.1). */
  #send(extra: Parameters<typeof encodeRtcp>[0]): void {
    const report = this.statistics.report(this.#o.ssrc, this.#now())
    const sdes = { type: 'sdes' as const, chunks: [{ ssrc: this.#o.ssrc, items: [{ type: SDES_CNAME, text: this.#o.cname }] }] }
    const plain = encodeRtcp([report, sdes, ...extra])
    const bytes = this.#o.srtcp === undefined ? plain : this.#o.srtcp.protect(plain)
    const socket = this.#target.mux ? this.#o.rtpSocket : (this.#o.rtcpSocket ?? this.#o.rtpSocket)
    const { address, port } = this.destination
    // On hold RFC 2543-style (c=0.0.0.0) there is nowhere to send, until the peer's own RTCP shows where.
    if (address === '0.0.0.0' || address === '::') return
    try {
      socket.send(bytes, port, address)
      this.stats.sent++
    } catch {
      // A socket closed under us (the call is ending): the report is simply not sent.
    }
  }

  #watchIf(): void {
    const on = this.#started && !this.#closed && this.#sends && this.#o.mediaTimeoutMs > 0
    if (on === this.#watching) return
    this.#watching = on
    if (!on) {
      this.#watch?.cancel()
      this.#watch = undefined
      return
    }
    this.#arm(this.#o.mediaTimeoutMs)
  }

  /** One timer per timeout, not per packet: when it fires early (the peer was heard since), it re-arms. */
  #arm(ms: number): void {
    this.#watch = this.#timers.schedule(ms, () => {
      if (!this.#watching) return
      const silent = this.#now() - this.#heardAt
      if (silent < this.#o.mediaTimeoutMs) return this.#arm(this.#o.mediaTimeoutMs - silent)
      this.#watching = false
      this.#o.onTimeout?.()
    })
  }
}

/** `::ffff:a.b.c.d` (a dual-stack socket) is the IPv4 address it carries. */
function unmapped(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address
}
