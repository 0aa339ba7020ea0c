/**
 * The live server transactions of an endpoint, by transaction key (RFC 3261 section 17.2.3). A transaction
 * leaves the table when its state machine terminates. The table is bounded: when it is full the caller answers
 * without a transaction (statelessly), which costs a retransmission a second handling but no memory. Its timers
 * run on a scheduler the table tracks, so `close()` cancels every one of them.
 */
import { InviteServerTransaction } from './invite-transactions.js'
import { NonInviteServerTransaction } from './non-invite-transactions.js'
import type { SipMessage, SipResponse } from '../message/sip-message.js'
import type { TimerHandle, TimerScheduler } from '../timer-scheduler.js'

/** Most live server transactions; at 20 requests/s a source keeps about 640 (timer J is 32 s over UDP). */
export const MAX_SERVER_TRANSACTIONS = 10_000

/** A server transaction of either kind. */
export type ServerTransaction = InviteServerTransaction | NonInviteServerTransaction

/** How a new transaction talks to its peer. */
export interface ServerTransactionWire {
  readonly reliable: boolean
  readonly send: (message: SipMessage) => void
}

/** Server transactions by key, bounded, with their timers cancellable at once. */
export class ServerTransactionTable {
  readonly #byKey = new Map<string, ServerTransaction>()
  readonly #pending = new Set<TimerHandle>()
  readonly #scheduler: TimerScheduler
  readonly #max: number
  #closed = false

  constructor(scheduler: TimerScheduler, max = MAX_SERVER_TRANSACTIONS) {
    this.#max = max
    this.#scheduler = {
      schedule: (ms, fire) => {
        // A transaction answered after close (an admission that resolved late) arms nothing.
        if (this.#closed) return { cancel: () => undefined }
        const handle: TimerHandle = scheduler.schedule(ms, () => {
          this.#pending.delete(tracked)
          fire()
        })
        const tracked: TimerHandle = {
          cancel: () => {
            this.#pending.delete(tracked)
            handle.cancel()
          },
        }
        this.#pending.add(tracked)
        return tracked
      },
    }
  }

  /** Live transactions. */
  get size(): number {
    return this.#byKey.size
  }

  /** Timers armed by live transactions. */
  get pendingTimers(): number {
    return this.#pending.size
  }

  /** The transaction a request belongs to, if it is live. */
  find(key: string): ServerTransaction | undefined {
    return this.#byKey.get(key)
  }

  /** A new INVITE server transaction under `key`; `null` when the table is full. `onNoAck`: timer H or L fired. */
  createInvite(key: string, wire: ServerTransactionWire, onNoAck?: (final: SipResponse) => void): InviteServerTransaction | null {
    if (this.#closed || this.#byKey.size >= this.#max) return null
    const tx = new InviteServerTransaction(
      { timers: this.#scheduler, reliable: wire.reliable, send: wire.send },
      { onTerminated: () => this.#remove(key, tx), onNoAck },
    )
    this.#byKey.set(key, tx)
    return tx
  }

  /** A new non-INVITE server transaction under `key`; `null` when the table is full. */
  createNonInvite(key: string, wire: ServerTransactionWire): NonInviteServerTransaction | null {
    if (this.#closed || this.#byKey.size >= this.#max) return null
    const tx = new NonInviteServerTransaction(
      { timers: this.#scheduler, reliable: wire.reliable, send: wire.send },
      { onTerminated: () => this.#remove(key, tx) },
    )
    this.#byKey.set(key, tx)
    return tx
  }

  /** Forgets every transaction and cancels every timer (the endpoint is closing). */
  close(): void {
    this.#closed = true
    for (const handle of [...this.#pending]) handle.cancel()
    this.#byKey.clear()
  }

  #remove(key: string, tx: ServerTransaction): void {
    if (this.#byKey.get(key) === tx) this.#byKey.delete(key)
  }
}
