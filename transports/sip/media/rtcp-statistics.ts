/**
 * What one call's RTCP reports say (RFC 3550 section 6.4): for the stream we send, packet and octet counts and
 * the RTP timestamp that goes with "now" (an SR); for the stream we receive, one reception report block, with
 * loss counted as appendix A.3 counts it (sequence numbers extended over wraps, as in A.1), jitter as in A.8,
 * and the last SR's time and delay so the peer can compute the round trip. Pure: times are given, never read.
 */
import type { ReportBlock, RtcpPacket } from './rtcp-codec.js'

/** Seconds from the NTP epoch (1900) to the Unix epoch (1970). */
const NTP_UNIX_OFFSET_S = 2_208_988_800
/** Appendix A.1: a jump this far ahead is a restart of the sequence, not loss. */
const MAX_DROPOUT = 3000
/** Appendix A.1: a packet this far behind is a late one (or a restart). */
const MAX_MISORDER = 100
const SEQ_MOD = 0x10000

/** The NTP timestamp of a wall-clock time in ms (RFC 3550 section 4). */
export function ntpTime(unixMs: number): { seconds: number; fraction: number } {
  const seconds = Math.floor(unixMs / 1000)
  const fraction = Math.floor(((unixMs - seconds * 1000) / 1000) * 0x100000000)
  return { seconds: (seconds + NTP_UNIX_OFFSET_S) >>> 0, fraction: fraction >>> 0 }
}

/** The middle 32 bits of an NTP timestamp, as LSR carries them (section 6.4.1). */
export function compactNtp(seconds: number, fraction: number): number {
  return (((seconds & 0xffff) << 16) | (fraction >>> 16)) >>> 0
}

/** Counts for one call's RTCP, fed with every RTP packet sent and received and every SR received. */
export class RtcpStatistics {
  readonly #clockRate: number
  // Sending side.
  #packetsSent = 0
  #octetsSent = 0
  #lastTimestamp = 0
  #lastSentAt = 0
  /** Reports made since we last sent RTP: an SR is due only while we send (section 6.4). */
  #reportsSinceSent = 2
  // Receiving side, for the one source we hear (the latched peer).
  #source: number | undefined
  #baseSeq = 0
  #maxSeq = 0
  #cycles = 0
  #received = 0
  #expectedPrior = 0
  #receivedPrior = 0
  #transit: number | undefined
  #jitter = 0
  #lastSr: { compact: number; atMs: number } | undefined

  constructor(clockRate = 8000) {
    this.#clockRate = clockRate
  }

  /** An RTP packet of ours left, with this timestamp and payload size. */
  sent(timestamp: number, payloadBytes: number, atMs: number): void {
    this.#packetsSent = (this.#packetsSent + 1) >>> 0
    this.#octetsSent = (this.#octetsSent + payloadBytes) >>> 0
    this.#lastTimestamp = timestamp
    this.#lastSentAt = atMs
    this.#reportsSinceSent = 0
  }

  /** An RTP packet of the peer's arrived (appendix A.1 and A.8). */
  received(packet: { ssrc: number; sequence: number; timestamp: number }, atMs: number): void {
    if (this.#source !== packet.ssrc) {
      // A new source (the peer restarted its stream): its counts start afresh.
      this.#source = packet.ssrc
      this.#restart(packet.sequence)
      this.#transit = undefined
      this.#jitter = 0
      this.#lastSr = undefined
    } else {
      const delta = (packet.sequence - this.#maxSeq + SEQ_MOD) % SEQ_MOD
      if (delta > 0 && delta < MAX_DROPOUT) {
        if (packet.sequence < this.#maxSeq) this.#cycles += SEQ_MOD
        this.#maxSeq = packet.sequence
      } else if (delta > SEQ_MOD - MAX_MISORDER || delta === 0) {
        // A duplicate or a late packet: counted as received, the highest sequence unchanged.
      } else {
        this.#restart(packet.sequence)
      }
    }
    this.#received++
    const arrival = Math.floor((atMs * this.#clockRate) / 1000)
    const transit = arrival - packet.timestamp
    if (this.#transit !== undefined) {
      const d = Math.abs(transit - this.#transit)
      this.#jitter += (d - this.#jitter) / 16
    }
    this.#transit = transit
  }

  /** The peer's SR: kept so our next report block tells it the round trip. */
  receivedSr(packet: { ntpSeconds: number; ntpFraction: number }, atMs: number): void {
    this.#lastSr = { compact: compactNtp(packet.ntpSeconds, packet.ntpFraction), atMs }
  }

  /** RTP packets sent so far. */
  get packetsSent(): number {
    return this.#packetsSent
  }

  /** RTP packets received from the current source. */
  get packetsReceived(): number {
    return this.#received
  }

  /**
   * The report to send now: an SR while we have sent RTP since the report before the last one (section 6.4),
   * else an RR; with one block for the peer's stream once it sent anything.
   */
  report(ssrc: number, nowMs: number): RtcpPacket {
    const reports = this.#block(nowMs)
    this.#reportsSinceSent++
    if (this.#reportsSinceSent > 2 || this.#packetsSent === 0) return { type: 'rr', ssrc, reports }
    const ntp = ntpTime(nowMs)
    const elapsed = Math.floor(((nowMs - this.#lastSentAt) * this.#clockRate) / 1000)
    return {
      type: 'sr',
      ssrc,
      ntpSeconds: ntp.seconds,
      ntpFraction: ntp.fraction,
      rtpTimestamp: (this.#lastTimestamp + elapsed) >>> 0,
      packetCount: this.#packetsSent,
      octetCount: this.#octetsSent,
      reports,
    }
  }

  #block(nowMs: number): ReportBlock[] {
    if (this.#source === undefined) return []
    const extended = this.#cycles + this.#maxSeq
    const expected = extended - this.#baseSeq + 1
    const expectedInterval = expected - this.#expectedPrior
    const receivedInterval = this.#received - this.#receivedPrior
    this.#expectedPrior = expected
    this.#receivedPrior = this.#received
    const lostInterval = expectedInterval - receivedInterval
    const fraction = expectedInterval === 0 || lostInterval <= 0 ? 0 : Math.floor((lostInterval * 256) / expectedInterval)
    const sr = this.#lastSr
    return [
      {
        ssrc: this.#source,
        fractionLost: Math.min(255, fraction),
        cumulativeLost: expected - this.#received,
        highestSequence: extended >>> 0,
        jitter: Math.floor(this.#jitter),
        lastSr: sr?.compact ?? 0,
        delaySinceLastSr: sr === undefined ? 0 : Math.floor(((nowMs - sr.atMs) * 65536) / 1000),
      },
    ]
  }

  #restart(sequence: number): void {
    this.#baseSeq = sequence
    this.#maxSeq = sequence
    this.#cycles = 0
    this.#received = 0
    this.#expectedPrior = 0
    this.#receivedPrior = 0
  }
}
