/**
 * What the RFC 3261 transaction state machines share (section 17): the timer values of table 4, the injected
 * scheduler they run on (a fake one in tests, so no test sleeps), the transport reliability that switches
 * retransmissions off, and the key that matches a message to its transaction (section 17.2.3).
 */
import { getHeader, type SipMessage } from './sip-message.js'
import { parseCSeq, parseVia } from './sip-uri-codec.js'

/** T1 (RTT estimate), T2 (longest retransmit interval), T4 (how long a message may stay in the network), in ms. */
export interface SipTimerValues {
  readonly t1: number
  readonly t2: number
  readonly t4: number
}

/** RFC 3261 table 4 defaults. */
export const DEFAULT_TIMERS: SipTimerValues = { t1: 500, t2: 4000, t4: 5000 }

/** A cancellable timer. */
export interface TimerHandle {
  cancel(): void
}

/** Schedules callbacks; production passes `setTimeout`-backed scheduling, tests a virtual clock. */
export interface TimerScheduler {
  schedule(ms: number, fire: () => void): TimerHandle
}

/** A scheduler on Node's timers, unref'd so an idle transaction never holds the process open. */
export const realTimers: TimerScheduler = {
  schedule(ms, fire) {
    const handle = setTimeout(fire, ms)
    handle.unref()
    return { cancel: () => clearTimeout(handle) }
  },
}

/** What every transaction is given. */
export interface TransactionContext {
  readonly timers: TimerScheduler
  /** TCP/TLS: no retransmissions, and the wait-for-retransmission timers (D, I, J, K) are zero. */
  readonly reliable: boolean
  readonly values?: SipTimerValues
  /** Hands a message to the transport (the same destination every time). */
  readonly send: (message: SipMessage) => void
}

/** Named timers of one transaction, each cancelled when set again or when the transaction ends. */
export class TransactionTimers {
  readonly #scheduler: TimerScheduler
  readonly #handles = new Map<string, TimerHandle>()

  constructor(scheduler: TimerScheduler) {
    this.#scheduler = scheduler
  }

  set(name: string, ms: number, fire: () => void): void {
    this.clear(name)
    this.#handles.set(
      name,
      this.#scheduler.schedule(ms, () => {
        this.#handles.delete(name)
        fire()
      }),
    )
  }

  clear(name: string): void {
    this.#handles.get(name)?.cancel()
    this.#handles.delete(name)
  }

  clearAll(): void {
    for (const handle of this.#handles.values()) handle.cancel()
    this.#handles.clear()
  }
}

/**
 * The key of the transaction a message belongs to (RFC 3261 sections 17.1.3 and 17.2.3): the top Via's branch,
 * its sent-by, and the CSeq method, with ACK matched to its INVITE. `null` without an RFC 3261 branch
 * (`z9hG4bK...`): RFC 2543 peers are matched by the dialog layer instead.
 */
export function transactionKey(message: SipMessage): string | null {
  const topVia = getHeader(message, 'Via')
  const cseq = parseCSeq(getHeader(message, 'CSeq') ?? '')
  const via = topVia === undefined ? null : parseVia(topVia.split(',')[0]!)
  const branch = via?.params.get('branch')
  if (via === null || cseq === null || branch == null || !branch.startsWith('z9hG4bK')) return null
  const method = cseq.method === 'ACK' ? 'INVITE' : cseq.method
  return `${branch}|${via.host}:${via.port ?? 5060}|${method}`
}
