/**
 * Outbound RTP pacing: one packet per 20 ms slot on a schedule anchored to the clock, not to the previous timer,
 * so timer lateness does not add up (drift correction), and never two packets closer than half a slot (no bursts,
 * whatever the queue holds). The transport calls `tick()` and sleeps for the returned delay; the pacer owns the
 * sequence numbers and the media timestamp, which advances with every slot, sent or silent (RFC 3550 section
 * 5.1), and sets the marker on the first packet of a talkspurt (RFC 3551 section 4.1). DTMF digits queue with the
 * audio and go out as RFC 4733 event packets in their slots. `clear()` drops queued audio at once for barge-in;
 * `pause()` holds it where it is (caller speech that may be an interruption) until `resume()` or `clear()`.
 *
 * With a `silence` frame, a slot with nothing queued sends that frame (steady RTP: SBCs hang up a call whose RTP
 * stops for 30-60 s). The marker then goes on the first packet after a gap in transmission (the first packet, a
 * skipped stall, a digit's events), as RFC 3551 section 4.1 asks of a sender without silence suppression.
 *
 * With `comfortNoise` (the peer negotiated RFC 3389 CN), silence is suppressed instead: the first idle slot after
 * audio or a digit sends one comfort-noise packet, and then only every `refreshSlots` idle slots one more (so the
 * peer's RTP inactivity timer and a NAT binding still see packets); the next audio starts a talkspurt with the
 * marker set (RFC 3551 section 4.1).
 */
import { type DtmfPacket, dtmfPackets } from './dtmf-sender.js'

/** A packet to send now. */
export interface PacedPacket {
  readonly marker: boolean
  readonly payloadType: number
  readonly sequence: number
  readonly timestamp: number
  readonly payload: Buffer
  /** True on a digit's last packet (its last end report): the digit is out. */
  readonly digitDone?: boolean | undefined
}

/** Pacer settings. */
export interface RtpPacerOptions {
  /** Clock in milliseconds; injected so tests need no sleeps. */
  readonly now?: () => number
  /** The negotiated audio payload type (0 PCMU, 8 PCMA). */
  readonly payloadType: number
  /** The peer's telephone-event payload type; digits cannot be sent without one. */
  readonly telephoneEventPayloadType?: number | undefined
  readonly frameMs?: number
  /** Timestamp units per frame: 160 for 20 ms at 8 kHz. */
  readonly samplesPerFrame?: number
  /** Most frames queued (a bound on memory and latency); `enqueue` refuses beyond it. */
  readonly maxQueuedFrames?: number
  /** Lateness past which missed slots are skipped rather than caught up. */
  readonly maxLateMs?: number
  /** Random in production; fixed in tests. */
  readonly initialSequence?: number
  readonly initialTimestamp?: number
  /** One frame of encoded silence, sent in every slot with nothing queued; unset: idle slots send nothing. */
  readonly silence?: Buffer | undefined
  /** Silence suppression with RFC 3389 comfort noise, instead of `silence` frames. */
  readonly comfortNoise?: ComfortNoise | undefined
}

/** How idle slots send comfort noise (RFC 3389). */
export interface ComfortNoise {
  /** The peer's CN payload type (13, or a dynamic one it mapped to CN/8000). */
  readonly payloadType: number
  /** The CN payload: the noise level (-dBov), no spectral parameters. */
  readonly payload: Buffer
  /** Idle slots between two CN packets in a long silence (50: one a second). */
  readonly refreshSlots: number
}

/** What `tick()` returns: the packet for this slot, if any, and when to call again. */
export interface PacerTick {
  readonly packet?: PacedPacket | undefined
  readonly delayMs: number
}

type Item =
  | { readonly kind: 'audio'; readonly payload: Buffer }
  | { readonly kind: 'digit'; readonly digit: string; readonly durationMs: number }

/** Counters for metrics. */
export interface PacerStats {
  sent: number
  /** Slots with nothing queued (silence sent, when the pacer has a silence frame). */
  idle: number
  /** Comfort-noise packets sent (counted in `sent` too). */
  comfortNoise: number
  /** Slots skipped because a tick came later than `maxLateMs`. */
  skipped: number
  /** Frames dropped by `clear()`. */
  cleared: number
}

/** Paces one outbound RTP stream. */
export class RtpPacer {
  readonly stats: PacerStats = { sent: 0, idle: 0, comfortNoise: 0, skipped: 0, cleared: 0 }
  readonly #now: () => number
  readonly #payloadType: number
  #eventPayloadType: number | undefined
  readonly #frameMs: number
  readonly #samples: number
  readonly #maxQueued: number
  readonly #maxLateMs: number
  readonly #queue: Item[] = []
  readonly #silence: Buffer | undefined
  #comfortNoise: ComfortNoise | undefined
  /** Idle slots since the last comfort-noise packet; undefined: one is due (nothing idle sent since audio). */
  #sinceComfortNoise: number | undefined
  #sequence: number
  #timestamp: number
  #next: number | undefined
  #talking = false
  /** Queued audio waits (idle slots) until resumed or cleared. */
  #paused = false
  /** The digit being sent: its remaining packets. */
  #event: { packets: DtmfPacket[]; index: number } | undefined

  constructor(options: RtpPacerOptions) {
    this.#now = options.now ?? Date.now
    this.#payloadType = options.payloadType
    this.#eventPayloadType = options.telephoneEventPayloadType
    this.#frameMs = options.frameMs ?? 20
    this.#samples = options.samplesPerFrame ?? 160
    this.#maxQueued = options.maxQueuedFrames ?? 1500
    this.#maxLateMs = options.maxLateMs ?? 60
    this.#silence = options.silence
    this.#comfortNoise = options.comfortNoise
    this.#sequence = (options.initialSequence ?? Math.floor(Math.random() * 0x10000)) & 0xffff
    this.#timestamp = (options.initialTimestamp ?? Math.floor(Math.random() * 0x100000000)) >>> 0
  }

  /** Frames and digits waiting. */
  get queued(): number {
    return this.#queue.length
  }

  /** Queues one 20 ms frame of encoded audio; `false` when the queue is full (the caller backs off). */
  enqueue(payload: Buffer): boolean {
    if (this.#queue.length >= this.#maxQueued) return false
    this.#queue.push({ kind: 'audio', payload })
    return true
  }

  /** Queues a DTMF digit after the audio already queued; `false` without a telephone-event payload type. */
  enqueueDigit(digit: string, durationMs = 100): boolean {
    if (this.#eventPayloadType === undefined || this.#queue.length >= this.#maxQueued) return false
    this.#queue.push({ kind: 'digit', digit, durationMs })
    return true
  }

  /** The peer's telephone-event payload type changed (a late answer, a re-INVITE); digits use it from now on. */
  setTelephoneEventPayloadType(payloadType: number | undefined): void {
    this.#eventPayloadType = payloadType
  }

  /** The peer's comfort-noise payload type changed (a re-INVITE): suppression with it, or `silence` frames again. */
  setComfortNoise(comfortNoise: ComfortNoise | undefined): void {
    this.#comfortNoise = comfortNoise
    this.#sinceComfortNoise = undefined
  }

  /** Whether queued audio is held (`pause()`). */
  get paused(): boolean {
    return this.#paused
  }

  /**
   * Holds the queued audio where it is: slots go idle (silence, when the pacer has a silence frame) and nothing is
   * dropped; a digit being sent finishes so the peer sees its end.
   */
  pause(): void {
    this.#paused = true
  }

  /** Sends the held audio on from where it paused. */
  resume(): void {
    this.#paused = false
  }

  /**
   * Drops queued audio (barge-in), and with it any pause; a digit being sent finishes so the peer sees its end.
   * Returns frames dropped.
   */
  clear(): number {
    this.#paused = false
    const dropped = this.#queue.length
    this.#queue.length = 0
    this.stats.cleared += dropped
    return dropped
  }

  /** Called by the transport's timer: at most one packet, and the delay until the next call. */
  tick(): PacerTick {
    const now = this.#now()
    if (this.#next === undefined) this.#next = now
    // Timers can fire a little early; more than a millisecond early is not this slot yet.
    if (now < this.#next - 1) return { delayMs: this.#next - now }
    const late = now - this.#next
    if (late > this.#maxLateMs) {
      const missed = Math.floor(late / this.#frameMs)
      this.#next += missed * this.#frameMs
      this.#timestamp = (this.#timestamp + missed * this.#samples) >>> 0
      this.stats.skipped += missed
      this.#talking = false
      // Skipped slots are idle time too: the next comfort noise stays a second after the last, stall or not.
      if (this.#sinceComfortNoise !== undefined) this.#sinceComfortNoise += missed
    }
    const packet = this.#slot()
    this.#timestamp = (this.#timestamp + this.#samples) >>> 0
    this.#next += this.#frameMs
    // Catch up on lateness gradually: never less than half a slot between packets.
    return { packet, delayMs: Math.max(this.#frameMs / 2, this.#next - now) }
  }

  #slot(): PacedPacket | undefined {
    if (this.#event === undefined && this.#queue[0]?.kind === 'digit' && !this.#paused) {
      const item = this.#queue.shift() as Extract<Item, { kind: 'digit' }>
      const packets = dtmfPackets({ digit: item.digit, durationMs: item.durationMs, timestamp: this.#timestamp, sequence: this.#sequence })
      if (packets !== null) this.#event = { packets, index: 0 }
    }
    if (this.#event !== undefined) {
      const p = this.#event.packets[this.#event.index++]!
      const done = this.#event.index >= this.#event.packets.length
      if (done) this.#event = undefined
      this.#talking = false
      this.#sinceComfortNoise = undefined
      return this.#emit({
        marker: p.marker,
        payloadType: this.#eventPayloadType!,
        timestamp: p.timestamp,
        payload: p.payload,
        digitDone: done,
      })
    }
    const item = this.#queue[0]?.kind === 'audio' && !this.#paused ? (this.#queue.shift() as Extract<Item, { kind: 'audio' }>) : undefined
    if (item === undefined) {
      this.stats.idle++
      if (this.#comfortNoise !== undefined) return this.#idleComfortNoise(this.#comfortNoise)
      if (this.#silence === undefined) {
        this.#talking = false
        return undefined
      }
    }
    const marker = !this.#talking
    this.#talking = true
    this.#sinceComfortNoise = undefined
    return this.#emit({ marker, payloadType: this.#payloadType, timestamp: this.#timestamp, payload: item?.payload ?? this.#silence! })
  }

  /** An idle slot with comfort noise: a CN packet when one is due, else nothing. */
  #idleComfortNoise(cn: ComfortNoise): PacedPacket | undefined {
    this.#talking = false
    if (this.#sinceComfortNoise !== undefined && ++this.#sinceComfortNoise < cn.refreshSlots) return undefined
    this.#sinceComfortNoise = 0
    this.stats.comfortNoise++
    return this.#emit({ marker: false, payloadType: cn.payloadType, timestamp: this.#timestamp, payload: cn.payload })
  }

  #emit(fields: Omit<PacedPacket, 'sequence'>): PacedPacket {
    // Each field by name, not a spread: this runs 50 times a second per call.
    const packet: PacedPacket = {
      marker: fields.marker,
      payloadType: fields.payloadType,
      sequence: this.#sequence,
      timestamp: fields.timestamp,
      payload: fields.payload,
      digitDone: fields.digitDone,
    }
    this.#sequence = (this.#sequence + 1) & 0xffff
    this.stats.sent++
    return packet
  }
}
