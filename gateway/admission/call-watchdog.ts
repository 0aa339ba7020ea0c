import type { EndReason } from '../../core/end-reason.js'

/**
 * Deadlines for carrier sessions that hold a concurrency slot while waiting: an outbound call that is
 * ringing (its final status callback may never come) and an answered call whose media stream has not
 * connected yet. When a deadline passes, `onExpire` ends the session so its slot is not held forever by a
 * live process that keeps renewing the lease. The timers are per process; a dead process's leases expire.
 */
export class CallWatchdog {
  readonly #timers = new Map<string, NodeJS.Timeout>()
  readonly #onExpire: (sessionId: string, reason: EndReason) => void

  constructor(onExpire: (sessionId: string, reason: EndReason) => void) {
    this.#onExpire = onExpire
  }

  /** (Re)starts the deadline of a session. */
  watch(sessionId: string, ms: number, reason: EndReason): void {
    this.settle(sessionId)
    const timer = setTimeout(() => {
      this.#timers.delete(sessionId)
      this.#onExpire(sessionId, reason)
    }, ms)
    timer.unref()
    this.#timers.set(sessionId, timer)
  }

  /** The session connected or ended: no deadline any more. */
  settle(sessionId: string): void {
    const timer = this.#timers.get(sessionId)
    if (timer === undefined) return
    clearTimeout(timer)
    this.#timers.delete(sessionId)
  }

  /** Sessions being watched (diagnostics, tests). */
  get size(): number {
    return this.#timers.size
  }

  /** Clears every deadline (shutdown). */
  stop(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer)
    this.#timers.clear()
  }
}
