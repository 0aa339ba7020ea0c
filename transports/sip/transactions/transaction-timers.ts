/**
 * What the RFC 3261 transaction state machines share (section 17): the timer values of table 4, the injected
 * scheduler they run on (a fake one in tests, so no test sleeps), the transport reliability that switches
 * retransmissions off, and the key that matches a message to its transaction (section 17.2.3).
 */
import { getHeader, type SipMessage, type SipRequest } from '../message/sip-message.js'
import { parseCSeq, parseNameAddr, parseVia } from '../message/sip-uri-codec.js'
import type { TimerHandle, TimerScheduler } from '../timer-scheduler.js'

/** T1 (RTT estimate), T2 (longest retransmit interval), T4 (how long a message may stay in the network), in ms. */
export interface SipTimerValues {
  readonly t1: number
  readonly t2: number
  readonly t4: number
}

/** RFC 3261 table 4 defaults. */
export const DEFAULT_TIMERS: SipTimerValues = { t1: 500, t2: 4000, t4: 5000 }

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
 * its sent-by, and the CSeq method, with ACK matched to its INVITE. A request whose branch lacks the `z9hG4bK`
 * cookie (an RFC 2543 peer, or none at all) is keyed by section 17.2.3's older rule instead: see
 * {@link rfc2543Key}. `null` without a Via or CSeq (answered statelessly).
 */
export function transactionKey(message: SipMessage): string | null {
  const topVia = getHeader(message, 'Via')?.split(',')[0]
  const cseq = parseCSeq(getHeader(message, 'CSeq') ?? '')
  const via = topVia === undefined ? null : parseVia(topVia)
  if (via === null || topVia === undefined || cseq === null) return null
  const branch = via.params.get('branch')
  const method = cseq.method === 'ACK' ? 'INVITE' : cseq.method
  if (branch?.startsWith('z9hG4bK')) return `${branch}|${via.host}:${via.port ?? 5060}|${method}`
  return message.kind === 'request' ? rfc2543Key(message, topVia, cseq.seq, method) : null
}

/**
 * Section 17.2.3 for a request without the cookie: the Request-URI, the From tag, the Call-ID, the CSeq (number
 * and method, ACK counted as its INVITE) and the top Via must all be those of the request that made the
 * transaction, and the To tag too, except for INVITE: its ACK carries the tag of our answer, which the INVITE
 * did not have (the rule's "To tag of the ACK matches the To tag of the response"; our tags are unique, and an
 * ACK for a 2xx is the dialog's anyway).
 */
function rfc2543Key(request: SipRequest, topVia: string, seq: number, method: string): string {
  const tag = (name: string): string => {
    const value = getHeader(request, name)
    return (value === undefined ? undefined : parseNameAddr(value)?.params.get('tag')) ?? ''
  }
  const via = topVia.trim().replace(/\s+/g, ' ').toLowerCase()
  const toTag = method === 'INVITE' ? '' : tag('To')
  return ['2543', method, seq, getHeader(request, 'Call-ID') ?? '', tag('From'), toTag, request.uri, via].join('\n')
}
