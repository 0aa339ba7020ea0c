/**
 * The RTP stream of one call on its own UDP socket. Incoming: RTCP and undecodable packets are ignored,
 * telephone-event packets become digits, comfort noise keeps the stream alive (its gaps become silence), audio goes
 * through the jitter buffer and comes out as one 20 ms frame per 20 ms of clock. Outgoing: frames go through the
 * pacer, one packet per 20 ms slot; when no audio is queued, G.711 silence, or with a peer that negotiated comfort
 * noise (RFC 3389) one CN packet and then one a second; nothing while the peer holds the call.
 *
 * RTCP (reports, and the media timeout when the peer goes silent) is the RtcpSession's: this stream hands it
 * the RTCP it gets on the RTP port (RFC 5761 mux) and tells it of every RTP packet sent and received.
 *
 * Symmetric RTP (rtp-latch.ts) decides whose packets are looked at and where ours go. With SRTP (an RTP/SAVP
 * stream) every packet is protected on the way out and must authenticate on the way in before anything else looks
 * at it, latching included: without the peer's key nobody can latch or inject.
 */
import { randomBytes } from 'node:crypto'
import type { RemoteInfo } from 'node:dgram'
import { ConnectedPeer } from './connected-peer.js'
import { DtmfReceiver } from './dtmf-receiver.js'
import { JitterBuffer } from './jitter-buffer.js'
import { type ClockedStream, type MediaClock, mediaClock } from './media-clock.js'
import { decodeRtp, encodeRtp, isRtcp } from './rtp-codec.js'
import { RtpLatch } from './rtp-latch.js'
import { type ComfortNoise, RtpPacer } from './rtp-pacer.js'
import type { RtpPortLease } from './rtp-port-pool.js'
import { RtcpSession, type RtcpTarget } from './rtcp-session.js'
import type { NegotiatedAudio } from './sdp-offer-answer.js'
import { SrtpSession } from './srtp/srtp-session.js'

/** Bytes of G.711 per 20 ms frame at 8 kHz. */
export const FRAME_BYTES = 160
/** Frame duration. */
export const FRAME_MS = 20
/** Most frames the incoming side catches up on in one tick after the event loop stalled (200 ms). */
const MAX_CATCH_UP_FRAMES = 10
/**
 * In a long pause toward a peer that takes comfort noise, one CN packet a second: well inside the RTP inactivity
 * timers of SBCs (30-60 s) and NAT bindings, at 2% of the packets of steady silence.
 */
const COMFORT_NOISE_REFRESH_SLOTS = 1000 / FRAME_MS
/** The comfort noise's level, -70 dBov (RFC 3389 section 3.1): a faint noise floor, no spectral shape. */
const COMFORT_NOISE_PAYLOAD = Buffer.from([70])

/** What the media tells the call. */
export interface RtpMediaEvents {
  /** One 20 ms frame of caller audio in the negotiated codec; `atMs` is its time since the first packet. */
  readonly onAudio: (frame: Buffer, atMs: number) => void
  readonly onDigit: (digit: string) => void
  /** What a callback threw: logged by the owner; the clock goes on. */
  readonly onError?: (error: unknown) => void
  /** No RTP or RTCP from the peer for the media timeout while it declared that it sends. */
  readonly onMediaTimeout?: () => void
}

/** How the stream's RTCP runs: where the peer takes it, and the media timeout (0: off). */
export interface RtpMediaRtcp {
  readonly target?: RtcpTarget | undefined
  readonly mediaTimeoutMs: number
}

/** Counters for tests and logs. */
export interface RtpMediaStats {
  received: number
  /** Packets ignored: undecodable, an unknown payload type, or another source than the latched one. */
  ignored: number
  /** Packets from an address that may not latch. */
  foreign: number
  /** SRTP packets dropped: replayed, or failing authentication (the wrong key, tampered, or not SRTP). */
  unauthenticated: number
}

/** One call's RTP. */
export class RtpMedia {
  readonly stats: RtpMediaStats = { received: 0, ignored: 0, foreign: 0, unauthenticated: 0 }
  readonly #lease: RtpPortLease
  readonly #events: RtpMediaEvents
  readonly #jitter: JitterBuffer
  readonly #dtmf = new DtmfReceiver()
  readonly #ssrc = randomBytes(4).readUInt32BE(0)
  #audio: NegotiatedAudio
  #pacer: RtpPacer
  #srtp: SrtpSession | undefined
  /** Frames and digits whose sending someone waits for (chunk ends), oldest first; a digit's `payload` is null. */
  #waiting: { payload: Buffer | null; sent: () => void }[] = []
  readonly #latch: RtpLatch
  #firstAt: number | undefined
  #pulled = 0
  readonly #clock: MediaClock
  /** This stream's place on the clock (one object for the stream's life, not one per packet). */
  readonly #clocked: ClockedStream = { run: (now) => this.#run(now) }
  #started = false
  #held = false
  #closed = false
  readonly #rtcp: RtcpSession
  /** Our sends, on a socket connected to the peer once latched. */
  readonly #out: ConnectedPeer

  constructor(
    lease: RtpPortLease,
    audio: NegotiatedAudio,
    signallingAddress: string,
    events: RtpMediaEvents,
    rtcp?: RtpMediaRtcp,
    clock: MediaClock = mediaClock,
  ) {
    this.#clock = clock
    this.#lease = lease
    this.#audio = audio
    this.#events = events
    this.#jitter = new JitterBuffer({ silenceByte: silenceOf(audio) })
    this.#pacer = newPacer(audio)
    this.#srtp = audio.srtp === undefined ? undefined : new SrtpSession(audio.srtp)
    this.#out = new ConnectedPeer(lease.socket)
    this.#latch = new RtpLatch({ address: audio.remoteAddress, port: audio.remotePort }, signallingAddress, this.#out)
    this.#rtcp = new RtcpSession({
      ssrc: this.#ssrc,
      cname: `voxgate-${this.#ssrc.toString(16)}@${lease.port}`,
      rtpSocket: this.#out,
      rtcpSocket: lease.rtcpSocket,
      target: rtcp?.target ?? defaultTarget(audio),
      peerSends: peerSends(audio),
      latchable: this.#latch.latchable,
      mediaTimeoutMs: rtcp?.mediaTimeoutMs ?? 0,
      onTimeout: () => events.onMediaTimeout?.(),
      // Read at each packet: a re-INVITE may bring new keys, or none.
      srtcp: {
        protect: (packet) => this.#srtp?.protectRtcp(packet) ?? packet,
        unprotect: (packet) => {
          if (this.#srtp === undefined) return packet
          const clear = this.#srtp.unprotectRtcp(packet)
          return typeof clear === 'string' ? undefined : clear
        },
      },
    })
    lease.socket.on('message', (bytes, from) => this.#onPacket(bytes, from))
    lease.socket.on('error', () => undefined)
  }

  /** Our RTP port (in the SDP answer). */
  get port(): number {
    return this.#lease.port
  }

  /** Where packets go now (the latched source, else the SDP's address). */
  get peer(): { address: string; port: number; latched: boolean } {
    return { ...this.#latch.peer, latched: this.#latch.latched }
  }

  /** RTCP counters (reports sent and received). */
  get rtcp(): RtcpSession {
    return this.#rtcp
  }

  /** Puts the stream on the media clock (its 20 ms slots), and starts RTCP with it. */
  start(): void {
    if (this.#started || this.#closed) return
    this.#started = true
    this.#rtcp.start()
    this.#clock.add(this.#clocked)
  }

  /** Queues one frame; `sent` is called when its packet left. False when the pacer's queue is full. */
  enqueue(frame: Buffer, sent?: () => void): boolean {
    if (this.#closed || !this.#pacer.enqueue(frame)) return false
    if (sent !== undefined) this.#waiting.push({ payload: frame, sent })
    return true
  }

  /** True when the peer negotiated telephone-event, so digits can go out as RFC 4733 events. */
  get sendsTelephoneEvents(): boolean {
    return this.#audio.telephoneEventPayloadType !== undefined
  }

  /**
   * Queues an RFC 4733 digit after the audio; `sent` is called when its last end report left. False when the peer
   * offered no telephone-event or the queue is full.
   */
  enqueueDigit(digit: string, durationMs?: number, sent?: () => void): boolean {
    if (this.#closed || !this.#pacer.enqueueDigit(digit, durationMs)) return false
    // Every digit waits in line, so one digit's end is never taken for a later digit's.
    this.#waiting.push({ payload: null, sent: sent ?? (() => undefined) })
    return true
  }

  /** Holds queued audio where it is (silence goes out meanwhile) until `resume` or `clear`. */
  pause(): void {
    this.#pacer.pause()
  }

  /** Sends held audio on from where it paused. */
  resume(): void {
    this.#pacer.resume()
  }

  /** Drops queued audio (barge-in), ending any pause; returns the frames dropped. */
  clear(): number {
    this.#waiting = []
    return this.#pacer.clear()
  }

  /**
   * A re-INVITE changed the stream: hold sends nothing (the held caller hears nothing, and queued audio waits);
   * a new address or codec applies from now on.
   */
  update(audio: NegotiatedAudio, rtcp?: RtcpTarget): void {
    this.#held = audio.held
    this.#rtcp.update(rtcp ?? defaultTarget(audio), peerSends(audio))
    const moved = audio.remoteAddress !== this.#audio.remoteAddress || audio.remotePort !== this.#audio.remotePort
    if (moved && !audio.held) {
      this.#latch.moveTo({ address: audio.remoteAddress, port: audio.remotePort })
    }
    if (audio.payloadType !== this.#audio.payloadType) {
      // Another codec: what was queued was encoded for the old one. Its chunks count as heard, so nothing waits.
      const paused = this.#pacer.paused
      this.#pacer = newPacer(audio)
      if (paused) this.#pacer.pause()
      for (const w of this.#waiting) w.sent()
      this.#waiting = []
    } else {
      // The same codec: the pacer keeps its place in the stream and takes what else changed.
      if (audio.telephoneEventPayloadType !== this.#audio.telephoneEventPayloadType) {
        this.#pacer.setTelephoneEventPayloadType(audio.telephoneEventPayloadType)
      }
      if (audio.comfortNoisePayloadType !== this.#audio.comfortNoisePayloadType) this.#pacer.setComfortNoise(comfortNoiseOf(audio))
    }
    if (audio.srtp === undefined) this.#srtp = undefined
    else if (this.#srtp?.uses(audio.srtp) !== true) this.#srtp = new SrtpSession(audio.srtp)
    this.#audio = audio
  }

  /** Stops the clock and frees the port. Idempotent. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    this.#clock.remove(this.#clocked)
    this.#waiting = []
    this.#rtcp.close()
    this.#out.close()
    this.#lease.release()
  }

  /** One run on the media clock: the packet of this slot out, the caller's due frames on; when to run next. */
  #run(now: number): number {
    if (this.#closed) return now + FRAME_MS
    const { packet, delayMs } = this.#held ? { packet: undefined, delayMs: FRAME_MS } : this.#pacer.tick()
    // Whatever the session's callbacks do, the 20 ms clock must go on (a timer callback that throws would also
    // take the process down).
    try {
      if (packet !== undefined) {
        const srtp = this.#srtp
        const bytes = srtp === undefined ? encodeRtp(packet, this.#ssrc) : srtp.sealRtp(encodeRtp(packet, this.#ssrc, srtp.rtpOverhead))
        const peer = this.#latch.peer
        this.#out.send(bytes, peer.port, peer.address)
        this.#rtcp.rtpSent(packet.timestamp, packet.payload.length)
        // The chunks whose last frame (or digit) this was are heard. No closure per packet: this runs 50 times a
        // second per call.
        const digitDone = packet.digitDone === true
        for (let w = this.#waiting[0]; w !== undefined; w = this.#waiting[0]) {
          if (w.payload === null ? !digitDone : w.payload !== packet.payload) break
          this.#waiting.shift()!.sent()
        }
      }
      this.#pull()
    } catch (e) {
      this.#events.onError?.(e)
    }
    return now + delayMs
  }

  /** Hands the caller's audio on, one frame per 20 ms since the first packet. */
  #pull(): void {
    for (const d of this.#dtmf.poll()) this.#events.onDigit(d.digit)
    if (this.#firstAt === undefined) return
    const due = Math.floor((Date.now() - this.#firstAt) / FRAME_MS)
    // After a stall the missed frames are skipped, not replayed in a burst the pipeline would take as speech.
    if (due - this.#pulled > MAX_CATCH_UP_FRAMES) this.#pulled = due - MAX_CATCH_UP_FRAMES
    while (this.#pulled < due) {
      this.#events.onAudio(this.#jitter.pop(), this.#pulled * FRAME_MS)
      this.#pulled++
    }
  }

  #onPacket(bytes: Buffer, from: RemoteInfo): void {
    if (this.#closed) return
    this.stats.received++
    if (isRtcp(bytes)) return this.#rtcp.receive(bytes, from)
    if (!this.#latch.admits(from)) return void this.stats.foreign++
    const clear = this.#srtp === undefined ? bytes : this.#srtp.unprotectRtp(bytes)
    if (typeof clear === 'string') return void this.stats.unauthenticated++
    const decoded = decodeRtp(clear)
    if (decoded.kind !== 'rtp') return void this.stats.ignored++
    const p = decoded.packet
    const audio = p.payloadType === this.#audio.payloadType
    const event = p.payloadType === this.#audio.telephoneEventPayloadType
    const noise = p.payloadType === this.#audio.comfortNoisePayloadType
    if (!audio && !event && !noise) return void this.stats.ignored++
    this.#latch.heard(from)
    this.#rtcp.rtpReceived(p)
    if (event) {
      for (const d of this.#dtmf.receive(p)) this.#events.onDigit(d.digit)
      return
    }
    // The peer is quiet: the jitter buffer's gap becomes silence (no noise is synthesized for the pipeline).
    if (noise) return
    this.#firstAt ??= Date.now()
    this.#jitter.push(p)
  }
}

/** The peer's RTCP by default: its RTP address, port + 1 (RFC 3550 section 11), no mux. */
function defaultTarget(audio: NegotiatedAudio): RtcpTarget {
  return { address: audio.remoteAddress, rtpPort: audio.remotePort, mux: false }
}

/** The peer declared that it sends RTP (sendrecv, not on hold): only then is its silence a reason to hang up. */
function peerSends(audio: NegotiatedAudio): boolean {
  return audio.remoteDirection === 'sendrecv' && !audio.held
}

function newPacer(audio: NegotiatedAudio): RtpPacer {
  // G.711 silence in every idle slot: an SBC with an RTP inactivity timer must not hang up on a quiet agent.
  return new RtpPacer({
    payloadType: audio.payloadType,
    telephoneEventPayloadType: audio.telephoneEventPayloadType,
    silence: Buffer.alloc(FRAME_BYTES, silenceOf(audio)),
    comfortNoise: comfortNoiseOf(audio),
  })
}

/** Silence suppression with comfort noise, when the peer negotiated CN. */
function comfortNoiseOf(audio: NegotiatedAudio): ComfortNoise | undefined {
  const payloadType = audio.comfortNoisePayloadType
  return payloadType === undefined ? undefined : { payloadType, payload: COMFORT_NOISE_PAYLOAD, refreshSlots: COMFORT_NOISE_REFRESH_SLOTS }
}

/** G.711 silence: 0xFF for PCMU, 0xD5 for PCMA. */
export function silenceOf(audio: Pick<NegotiatedAudio, 'codec'>): number {
  return audio.codec === 'PCMU' ? 0xff : 0xd5
}
