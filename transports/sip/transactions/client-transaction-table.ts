/**
 * The endpoint's own requests in flight (BYE to end a call, an outbound call's INVITE and CANCEL), as client
 * transactions keyed by their Via branch and CSeq method, which the response carries back (RFC 3261 section
 * 17.1.3; a CANCEL shares its INVITE's branch). Bounded: past `max` a request is sent once without
 * retransmissions rather than held (an INVITE is then refused: the call is not placed).
 */
import { randomBytes } from 'node:crypto'
import { type InviteClientEvents, InviteClientTransaction } from './invite-transactions.js'
import { NonInviteClientTransaction } from './non-invite-transactions.js'
import { getHeader, type SipRequest, type SipResponse } from '../message/sip-message.js'
import { parseCSeq, parseVia } from '../message/sip-uri-codec.js'
import type { TimerScheduler } from '../timer-scheduler.js'

/** Most client transactions held. */
export const MAX_CLIENT_TRANSACTIONS = 4_000

/** How a request reaches its peer. */
export interface ClientWire {
  readonly reliable: boolean
  readonly send: (request: SipRequest) => void
}

/** Client transactions by branch. */
export class ClientTransactionTable {
  readonly #byBranch = new Map<string, NonInviteClientTransaction | InviteClientTransaction>()
  readonly #timers: TimerScheduler
  readonly #max: number

  constructor(timers: TimerScheduler, max = MAX_CLIENT_TRANSACTIONS) {
    this.#timers = timers
    this.#max = max
  }

  /** Live transactions. */
  get size(): number {
    return this.#byBranch.size
  }

  /** Sends `request` (its top Via has `branch`) and retransmits it until a final answer or timer F. */
  send(request: SipRequest, branch: string, wire: ClientWire, done: (status: number | 'timeout') => void = () => undefined): void {
    if (this.#byBranch.size >= this.#max) {
      wire.send(request)
      done('timeout')
      return
    }
    const key = txKey(branch, request.method)
    const tx: NonInviteClientTransaction = new NonInviteClientTransaction(
      request,
      { timers: this.#timers, reliable: wire.reliable, send: (m) => wire.send(m as SipRequest) },
      {
        onResponse: (r) => {
          if (r.status >= 200) done(r.status)
        },
        onTimeout: () => done('timeout'),
        onTerminated: () => {
          if (this.#byBranch.get(key) === tx) this.#byBranch.delete(key)
        },
      },
    )
    this.#byBranch.set(key, tx)
    tx.start()
  }

  /** Sends an INVITE as a client transaction (timers A and B); null when the table is full (nothing sent). */
  sendInvite(request: SipRequest, branch: string, wire: ClientWire, events: InviteClientEvents): InviteClientTransaction | null {
    if (this.#byBranch.size >= this.#max) return null
    const key = txKey(branch, 'INVITE')
    const tx: InviteClientTransaction = new InviteClientTransaction(
      request,
      { timers: this.#timers, reliable: wire.reliable, send: (m) => wire.send(m as SipRequest) },
      {
        ...events,
        onTerminated: () => {
          if (this.#byBranch.get(key) === tx) this.#byBranch.delete(key)
          events.onTerminated?.()
        },
      },
    )
    this.#byBranch.set(key, tx)
    tx.start()
    return tx
  }

  /** Gives up on every request in flight (the endpoint closes): no more retransmissions. */
  close(): void {
    for (const tx of [...this.#byBranch.values()]) tx.transportError()
    this.#byBranch.clear()
  }

  /** Hands a response to its transaction; false when none matches (a stray response is dropped). */
  receive(response: SipResponse): boolean {
    const via = getHeader(response, 'Via')
    const branch = via === undefined ? undefined : parseVia(via)?.params.get('branch')
    const method = parseCSeq(getHeader(response, 'CSeq') ?? '')?.method
    const tx = typeof branch === 'string' && method !== undefined ? this.#byBranch.get(txKey(branch, method)) : undefined
    if (tx === undefined) return false
    tx.receive(response)
    return true
  }
}

function txKey(branch: string, method: string): string {
  return `${branch}\n${method.toUpperCase()}`
}

/** A new RFC 3261 branch (the magic cookie, then 96 random bits). */
export function newBranch(): string {
  return `z9hG4bK${randomBytes(12).toString('hex')}`
}
