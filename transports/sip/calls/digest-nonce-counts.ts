/**
 * The highest nonce count (`nc`) accepted per nonce, so a digest answer is good once (RFC 7616 section 3.4, RFC
 * 2617 section 3.2.2: "if the same nc-value is seen twice, then the request is a replay"). Only answers with the
 * right password are recorded, so the table grows with real callers, not with strangers; it is bounded all the
 * same. A nonce whose entry was pushed out is not trusted again: every nonce issued up to the newest one pushed
 * out is refused as used, and its client gets a fresh nonce (a 401 with stale=true) instead of a replay going
 * through.
 */

/** Nonces remembered at most; past this the oldest entry goes and the floor rises to its issue time. */
export const MAX_TRACKED_NONCES = 10_000

/** Per nonce, the highest count accepted; bounded, with entries older than the nonce lifetime forgotten. */
export class NonceCounts {
  readonly #max: number
  /** Nonce -> { issued (ms), highest nc }; insertion order is first use, close to issue order. */
  readonly #seen = new Map<string, { issued: number; nc: number }>()
  /** Nonces issued at or before this time and not in the table are refused: their entry may have been dropped. */
  #floor = Number.NEGATIVE_INFINITY

  constructor(max = MAX_TRACKED_NONCES) {
    this.#max = max
  }

  /**
   * Records `nc` for `nonce` (issued at `issued` ms) and says whether it is new: strictly above the highest seen.
   * `expiredBefore` drops entries of nonces issued before it (they can no longer be accepted anyway).
   */
  use(nonce: string, issued: number, nc: number, expiredBefore: number): boolean {
    this.#forget(expiredBefore)
    const entry = this.#seen.get(nonce)
    if (entry === undefined) {
      if (issued <= this.#floor) return false
      if (this.#seen.size >= this.#max) this.#evictOldest()
      this.#seen.set(nonce, { issued, nc })
      return true
    }
    if (nc <= entry.nc) return false
    entry.nc = nc
    return true
  }

  /** Entries held (tests, and a bound to check). */
  get size(): number {
    return this.#seen.size
  }

  #forget(expiredBefore: number): void {
    for (const [nonce, entry] of this.#seen) {
      if (entry.issued >= expiredBefore) break
      this.#seen.delete(nonce)
    }
  }

  #evictOldest(): void {
    const first = this.#seen.entries().next()
    if (first.done === true) return
    const [nonce, entry] = first.value
    this.#seen.delete(nonce)
    this.#floor = Math.max(this.#floor, entry.issued)
  }
}
