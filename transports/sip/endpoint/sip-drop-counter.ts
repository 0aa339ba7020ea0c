/**
 * What the endpoint drops: counts by reason since start, each drop also handed to the metrics, and one log line a
 * minute per source (drop-log-throttle.ts) so that a flood does not flood the log too.
 */
import type { Log } from '../../../core/log.js'
import type { SipSource } from '../calls/sip-admission.js'
import { DropLogThrottle } from './drop-log-throttle.js'

/** Why a message never reached the request handler (a malformed request may still get its 400), as counted. */
export type SipDropReason = 'scanner' | 'rate_limited' | 'malformed' | 'connection_limit' | 'framing_error' | 'internal_error'

/** Counts by reason since start (the same figures the metrics get). */
export type SipDropCounts = Record<SipDropReason, number>

/** Where each drop is counted besides here; the wiring turns it into metrics. */
export interface SipDropMetrics {
  dropped(reason: SipDropReason): void
}

/** The endpoint's drop counts and their throttled log. */
export class SipDropCounter {
  readonly #dropped: SipDropCounts = {
    scanner: 0,
    rate_limited: 0,
    malformed: 0,
    connection_limit: 0,
    framing_error: 0,
    internal_error: 0,
  }
  readonly #log: Log
  readonly #metrics: SipDropMetrics | undefined
  readonly #dropLog: DropLogThrottle

  /** `now` is the clock of the once-a-minute log (tests); `Date.now` by default. */
  constructor(log: Log, metrics: SipDropMetrics | undefined, now?: () => number) {
    this.#log = log
    this.#metrics = metrics
    this.#dropLog = new DropLogThrottle(undefined, undefined, now)
  }

  /** Messages dropped without an answer, by reason. */
  get counts(): Readonly<SipDropCounts> {
    return this.#dropped
  }

  /** Counts a message dropped from `address`; the log says so at most once a minute per source. */
  drop(reason: SipDropReason, address: string, detail?: string): void {
    this.#dropped[reason]++
    this.#metrics?.dropped(reason)
    const counts = this.#dropLog.record(address, reason)
    if (counts !== null) this.#log.info({ source: address, counts, detail }, 'SIP traffic dropped (logged once a minute per source)')
  }

  /** Counts what a socket handler threw: a bug, not a peer's doing, so each one is logged with its error. */
  failed(source: SipSource, error: unknown): void {
    this.#dropped.internal_error++
    this.#metrics?.dropped('internal_error')
    this.#log.error({ err: error, source: source.address, transport: source.transport }, 'SIP message handling failed')
  }
}
