/**
 * Turns RFC 4733 telephone-event packets into one digit per key press. A press is one event: every report of it
 * carries the same RTP timestamp (its start, section 2.5.1.2), its duration grows, and the final report has the
 * E bit and is sent three times (section 2.5.1.4). So digits are keyed by (SSRC, timestamp): the first end report
 * emits the digit, the retransmissions and any late report are dropped. When every end report is lost, the digit
 * still comes out when the next event starts or when the event has been silent for `endTimeoutMs`.
 */
import { type DtmfDigit, decodeTelephoneEvent, eventToDigit } from './telephone-event-codec.js'

/** A digit received. */
export interface ReceivedDigit {
  readonly digit: DtmfDigit
  /** How long the key was held, from the last report's duration (8000 units per second). */
  readonly durationMs: number
}

/** The RTP fields the receiver reads. */
export interface TelephoneEventPacket {
  readonly ssrc: number
  readonly timestamp: number
  readonly payload: Uint8Array
}

/** Receiver options. */
export interface DtmfReceiverOptions {
  /** Clock in milliseconds; injected so tests need no sleeps. */
  readonly now?: () => number
  /** An event with no report for this long and no end is reported anyway (its end packets were lost). */
  readonly endTimeoutMs?: number
}

/** How many finished events are remembered to drop their late retransmissions. */
const REMEMBERED = 32

/** Stateful receiver for one RTP stream's telephone-event packets. */
export class DtmfReceiver {
  readonly #now: () => number
  readonly #endTimeoutMs: number
  /** Keys of events already reported, oldest first. */
  readonly #done: string[] = []
  #open: { key: string; digit: DtmfDigit; duration: number; lastAt: number } | undefined

  constructor(options: DtmfReceiverOptions = {}) {
    this.#now = options.now ?? Date.now
    this.#endTimeoutMs = options.endTimeoutMs ?? 1000
  }

  /** Feeds one telephone-event packet; returns the digits it completes (usually none or one). */
  receive(packet: TelephoneEventPacket): ReceivedDigit[] {
    const ev = decodeTelephoneEvent(packet.payload)
    const digit = ev === null ? undefined : eventToDigit(ev.event)
    if (ev === null || digit === undefined) return []
    const key = `${packet.ssrc >>> 0}:${packet.timestamp >>> 0}`
    if (this.#done.includes(key)) return []
    const out: ReceivedDigit[] = []
    if (this.#open !== undefined && this.#open.key !== key) out.push(this.#finish())
    if (ev.end) {
      this.#open = undefined
      this.#remember(key)
      out.push({ digit, durationMs: ev.duration / 8 })
    } else {
      this.#open = { key, digit, duration: ev.duration, lastAt: this.#now() }
    }
    return out
  }

  /** Reports an event whose end never came once it has been silent for the timeout; call it from the media tick. */
  poll(): ReceivedDigit[] {
    if (this.#open === undefined || this.#now() - this.#open.lastAt < this.#endTimeoutMs) return []
    return [this.#finish()]
  }

  #finish(): ReceivedDigit {
    const open = this.#open!
    this.#open = undefined
    this.#remember(open.key)
    return { digit: open.digit, durationMs: open.duration / 8 }
  }

  #remember(key: string): void {
    this.#done.push(key)
    if (this.#done.length > REMEMBERED) this.#done.shift()
  }
}
