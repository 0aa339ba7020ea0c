/**
 * The INVITE transactions of RFC 3261 section 17, with RFC 6026's Accepted state, as state machines on an
 * injected scheduler.
 *
 * Client (17.1.1): Calling -> Proceeding -> Completed/Accepted -> Terminated. Over UDP the INVITE is resent on
 * timer A (T1, doubling). Timer B gives up while no answer at all came (Calling). A 300-699 is acknowledged by the transaction itself, and timer D
 * absorbs its retransmissions. A 2xx is passed up, and the TU sends that ACK (section 13.2.2.4).
 *
 * Server (17.2.1): Proceeding -> Completed -> Confirmed -> Terminated for an error answer. Timer G resends the
 * answer, timer H gives up waiting for the ACK, and timer I absorbs ACK retransmissions. A 2xx goes to Accepted.
 * There the 2xx is resent on G's schedule until the ACK comes (section 13.3.1.4), retransmitted INVITEs are
 * absorbed, and timer L ends the transaction (RFC 6026 section 8.7). Without an ACK by then, the TU hangs up.
 */
import { getHeader, type SipHeader, type SipRequest, type SipResponse } from '../message/sip-message.js'
import { DEFAULT_TIMERS, type TransactionContext, TransactionTimers } from './transaction-timers.js'

/** INVITE client transaction states. */
export type InviteClientState = 'calling' | 'proceeding' | 'completed' | 'accepted' | 'terminated'

/** Callbacks to the transaction user. */
export interface InviteClientEvents {
  /** Provisional responses, the final response, and (in Accepted) retransmitted 2xx the TU must ACK again. */
  readonly onResponse: (response: SipResponse) => void
  /** Timer B: no final response in 64*T1. */
  readonly onTimeout: () => void
  readonly onTerminated?: () => void
}

/** The ACK for a 300-699 answer (section 17.1.1.3): the INVITE's URI, Call-ID, From, top Via and Route, the answer's To. */
export function ackForError(invite: SipRequest, response: SipResponse): SipRequest {
  const headers: SipHeader[] = []
  const topVia = getHeader(invite, 'Via')
  if (topVia !== undefined) headers.push({ name: 'Via', value: topVia.split(',')[0]!.trim() })
  for (const name of ['Max-Forwards', 'From', 'Call-ID']) {
    const value = getHeader(invite, name)
    if (value !== undefined) headers.push({ name, value })
  }
  headers.push({ name: 'To', value: getHeader(response, 'To') ?? getHeader(invite, 'To') ?? '' })
  const seq = (getHeader(invite, 'CSeq') ?? '').trim().split(/\s+/)[0]
  headers.push({ name: 'CSeq', value: `${seq} ACK` })
  for (const h of invite.headers) if (h.name === 'Route') headers.push(h)
  return { kind: 'request', method: 'ACK', uri: invite.uri, headers, body: Buffer.alloc(0) }
}

/** An INVITE client transaction: `start()` sends the INVITE. */
export class InviteClientTransaction {
  readonly #ctx: TransactionContext
  readonly #events: InviteClientEvents
  readonly #invite: SipRequest
  readonly #timers: TransactionTimers
  #state: InviteClientState = 'calling'
  #interval = 0
  #ack: SipRequest | undefined

  constructor(invite: SipRequest, ctx: TransactionContext, events: InviteClientEvents) {
    this.#invite = invite
    this.#ctx = ctx
    this.#events = events
    this.#timers = new TransactionTimers(ctx.timers)
  }

  get state(): InviteClientState {
    return this.#state
  }

  /** Sends the INVITE; arms timer A (unreliable only) and B. */
  start(): void {
    const { t1 } = this.#ctx.values ?? DEFAULT_TIMERS
    this.#ctx.send(this.#invite)
    if (!this.#ctx.reliable) {
      this.#interval = t1
      this.#timers.set('A', t1, () => this.#retransmit())
    }
    // Section 17.1.1.2: timer B gives up only in Calling. Once a provisional answer came, the call rings as long
    // as the far end lets it; the TU decides when to stop (CANCEL), and the final answer ends the transaction.
    this.#timers.set('B', 64 * t1, () => {
      if (this.#state === 'calling') {
        this.#terminate()
        this.#events.onTimeout()
      }
    })
  }

  /** A response matched to this transaction. */
  receive(response: SipResponse): void {
    const { t1 } = this.#ctx.values ?? DEFAULT_TIMERS
    switch (this.#state) {
      case 'calling':
      case 'proceeding':
        this.#timers.clear('A')
        if (response.status < 200) {
          this.#state = 'proceeding'
          this.#events.onResponse(response)
        } else if (response.status < 300) {
          // RFC 6026 section 8.4: stay to pass retransmitted 2xx (and 2xx from other forks) to the TU.
          this.#state = 'accepted'
          this.#timers.clear('B')
          this.#timers.set('M', 64 * t1, () => this.#terminate())
          this.#events.onResponse(response)
        } else {
          this.#state = 'completed'
          this.#timers.clear('B')
          this.#ack = ackForError(this.#invite, response)
          this.#ctx.send(this.#ack)
          this.#events.onResponse(response)
          this.#timers.set('D', this.#ctx.reliable ? 0 : 32_000, () => this.#terminate())
        }
        return
      case 'completed':
        // A retransmitted error answer: our ACK was lost. Resend it; the TU already has the answer.
        if (response.status >= 300 && this.#ack !== undefined) this.#ctx.send(this.#ack)
        return
      case 'accepted':
        if (response.status >= 200 && response.status < 300) this.#events.onResponse(response)
        return
      case 'terminated':
        return
    }
  }

  /** A transport error ends the transaction at once (section 17.1.4). */
  transportError(): void {
    if (this.#state === 'terminated') return
    this.#terminate()
    this.#events.onTimeout()
  }

  #retransmit(): void {
    if (this.#state !== 'calling') return
    this.#ctx.send(this.#invite)
    this.#interval *= 2
    this.#timers.set('A', this.#interval, () => this.#retransmit())
  }

  #terminate(): void {
    this.#state = 'terminated'
    this.#timers.clearAll()
    this.#events.onTerminated?.()
  }
}

/** INVITE server transaction states. */
export type InviteServerState = 'proceeding' | 'completed' | 'confirmed' | 'accepted' | 'terminated'

/** Callbacks to the transaction user. */
export interface InviteServerEvents {
  /** Timer H (no ACK for an error answer) or timer L with a 2xx never acknowledged: the TU ends the dialog. */
  readonly onNoAck?: (final: SipResponse) => void
  readonly onTerminated?: () => void
}

/** An INVITE server transaction, created for an incoming INVITE the TU answers with `respond()`. */
export class InviteServerTransaction {
  readonly #ctx: TransactionContext
  readonly #events: InviteServerEvents
  readonly #timers: TransactionTimers
  #state: InviteServerState = 'proceeding'
  #last: SipResponse | undefined
  #interval = 0
  #acked = false

  constructor(ctx: TransactionContext, events: InviteServerEvents = {}) {
    this.#ctx = ctx
    this.#events = events
    this.#timers = new TransactionTimers(ctx.timers)
  }

  get state(): InviteServerState {
    return this.#state
  }

  /** The TU's response: a provisional keeps Proceeding, a 2xx goes to Accepted, an error to Completed. */
  respond(response: SipResponse): void {
    if (this.#state !== 'proceeding') {
      // In Accepted the TU may only resend its 2xx; anything else is a TU bug and is not sent.
      if (this.#state !== 'accepted' || response.status >= 300 || response.status < 200) return
    }
    this.#last = response
    this.#ctx.send(response)
    if (response.status < 200) return
    const { t1 } = this.#ctx.values ?? DEFAULT_TIMERS
    if (response.status < 300) {
      if (this.#state === 'accepted') return
      this.#state = 'accepted'
      if (!this.#ctx.reliable) this.#armRetransmit()
      this.#timers.set('L', 64 * t1, () => {
        if (!this.#acked) this.#events.onNoAck?.(response)
        this.#terminate()
      })
      return
    }
    this.#state = 'completed'
    if (!this.#ctx.reliable) this.#armRetransmit()
    this.#timers.set('H', 64 * t1, () => {
      if (this.#state !== 'completed') return
      this.#terminate()
      this.#events.onNoAck?.(response)
    })
  }

  /** A retransmitted INVITE: answered with the last response (if any); never passed to the TU again. */
  receiveRetransmission(_invite: SipRequest): void {
    if ((this.#state === 'proceeding' || this.#state === 'completed') && this.#last !== undefined) this.#ctx.send(this.#last)
  }

  /** The ACK. For an error answer it moves to Confirmed (timer I); for a 2xx it stops the 2xx retransmissions. */
  receiveAck(_ack: SipRequest): void {
    if (this.#state === 'completed') {
      this.#state = 'confirmed'
      this.#timers.clear('G')
      this.#timers.clear('H')
      const { t4 } = this.#ctx.values ?? DEFAULT_TIMERS
      this.#timers.set('I', this.#ctx.reliable ? 0 : t4, () => this.#terminate())
    } else if (this.#state === 'accepted') {
      this.#acked = true
      this.#timers.clear('G')
    }
  }

  /** Timer G: resend the final answer, T1 doubling up to T2. */
  #armRetransmit(): void {
    const { t1, t2 } = this.#ctx.values ?? DEFAULT_TIMERS
    this.#interval = t1
    const fire = (): void => {
      if ((this.#state !== 'completed' && this.#state !== 'accepted') || this.#acked || this.#last === undefined) return
      this.#ctx.send(this.#last)
      this.#interval = Math.min(2 * this.#interval, t2)
      this.#timers.set('G', this.#interval, fire)
    }
    this.#timers.set('G', this.#interval, fire)
  }

  #terminate(): void {
    this.#state = 'terminated'
    this.#timers.clearAll()
    this.#events.onTerminated?.()
  }
}
