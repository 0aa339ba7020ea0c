/**
 * The non-INVITE transactions of RFC 3261 section 17 (BYE, CANCEL, OPTIONS, UPDATE, INFO, ...), as state
 * machines on an injected scheduler. Client (17.1.2): Trying -> Proceeding -> Completed -> Terminated, the request
 * retransmitted on timer E (T1 doubling to T2) over UDP, timer F giving up, timer K absorbing late responses.
 * Server (17.2.2): Trying -> Proceeding -> Completed -> Terminated, retransmitted requests answered with the last
 * response, timer J keeping the response for them.
 */
import type { SipRequest, SipResponse } from '../message/sip-message.js'
import { DEFAULT_TIMERS, type TransactionContext, TransactionTimers } from './transaction-timers.js'

/** Client transaction states. */
export type NonInviteClientState = 'trying' | 'proceeding' | 'completed' | 'terminated'

/** Callbacks to the transaction user. */
export interface NonInviteClientEvents {
  /** Every provisional and the final response, each once. */
  readonly onResponse: (response: SipResponse) => void
  /** Timer F: no final response in 64*T1 (the TU treats it as a 408). */
  readonly onTimeout: () => void
  readonly onTerminated?: () => void
}

/** A non-INVITE client transaction: `start()` sends the request. */
export class NonInviteClientTransaction {
  readonly #ctx: TransactionContext
  readonly #events: NonInviteClientEvents
  readonly #request: SipRequest
  readonly #timers: TransactionTimers
  #state: NonInviteClientState = 'trying'
  #interval = 0

  constructor(request: SipRequest, ctx: TransactionContext, events: NonInviteClientEvents) {
    this.#request = request
    this.#ctx = ctx
    this.#events = events
    this.#timers = new TransactionTimers(ctx.timers)
  }

  get state(): NonInviteClientState {
    return this.#state
  }

  /** Sends the request and arms timers E (unreliable only) and F. */
  start(): void {
    const { t1 } = this.#ctx.values ?? DEFAULT_TIMERS
    this.#ctx.send(this.#request)
    if (!this.#ctx.reliable) {
      this.#interval = t1
      this.#timers.set('E', t1, () => this.#retransmit())
    }
    this.#timers.set('F', 64 * t1, () => {
      if (this.#state === 'trying' || this.#state === 'proceeding') {
        this.#terminate()
        this.#events.onTimeout()
      }
    })
  }

  /** A response matched to this transaction by the transport. */
  receive(response: SipResponse): void {
    if (this.#state === 'completed' || this.#state === 'terminated') return
    if (response.status < 200) {
      this.#state = 'proceeding'
      this.#events.onResponse(response)
      return
    }
    this.#state = 'completed'
    this.#timers.clear('E')
    this.#timers.clear('F')
    this.#events.onResponse(response)
    const { t4 } = this.#ctx.values ?? DEFAULT_TIMERS
    this.#timers.set('K', this.#ctx.reliable ? 0 : t4, () => this.#terminate())
  }

  /** A transport error ends the transaction at once (section 17.1.4). */
  transportError(): void {
    if (this.#state === 'terminated') return
    this.#terminate()
    this.#events.onTimeout()
  }

  #retransmit(): void {
    if (this.#state !== 'trying' && this.#state !== 'proceeding') return
    const { t2 } = this.#ctx.values ?? DEFAULT_TIMERS
    this.#ctx.send(this.#request)
    // In Trying the interval doubles up to T2; in Proceeding it is T2 (section 17.1.2.2).
    this.#interval = this.#state === 'trying' ? Math.min(2 * this.#interval, t2) : t2
    this.#timers.set('E', this.#interval, () => this.#retransmit())
  }

  #terminate(): void {
    this.#state = 'terminated'
    this.#timers.clearAll()
    this.#events.onTerminated?.()
  }
}

/** Server transaction states. */
export type NonInviteServerState = 'trying' | 'proceeding' | 'completed' | 'terminated'

/** A non-INVITE server transaction, created for a request the TU will answer with `respond()`. */
export class NonInviteServerTransaction {
  readonly #ctx: TransactionContext
  readonly #timers: TransactionTimers
  readonly #onTerminated: (() => void) | undefined
  #state: NonInviteServerState = 'trying'
  #last: SipResponse | undefined

  constructor(ctx: TransactionContext, events: { onTerminated?: () => void } = {}) {
    this.#ctx = ctx
    this.#timers = new TransactionTimers(ctx.timers)
    this.#onTerminated = events.onTerminated
  }

  get state(): NonInviteServerState {
    return this.#state
  }

  /** A retransmission of the request: answered with the last response, never passed to the TU again. */
  receiveRetransmission(_request: SipRequest): void {
    if ((this.#state === 'proceeding' || this.#state === 'completed') && this.#last !== undefined) this.#ctx.send(this.#last)
  }

  /** The TU's response. A final one completes the transaction; timer J keeps it for retransmissions. */
  respond(response: SipResponse): void {
    if (this.#state === 'completed' || this.#state === 'terminated') return
    this.#last = response
    this.#ctx.send(response)
    if (response.status < 200) {
      this.#state = 'proceeding'
      return
    }
    this.#state = 'completed'
    const { t1 } = this.#ctx.values ?? DEFAULT_TIMERS
    this.#timers.set('J', this.#ctx.reliable ? 0 : 64 * t1, () => {
      this.#state = 'terminated'
      this.#onTerminated?.()
    })
  }
}
