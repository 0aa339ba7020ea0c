/**
 * A token bucket: holds at most `capacity` tokens, refills `ratePerMs` tokens per millisecond of wall clock, and
 * starts full. The clock is injected so tests can drive it.
 */
export class TokenBucket {
  #tokens: number
  #last: number

  readonly #ratePerMs: number
  readonly #now: () => number
  constructor(
    readonly capacity: number,
    ratePerMs: number,
    now: () => number = Date.now,
  ) {
    this.#ratePerMs = ratePerMs
    this.#now = now
    this.#tokens = capacity
    this.#last = now()
  }

  /** Takes `cost` tokens if there are that many; false (and nothing taken) otherwise. */
  take(cost: number): boolean {
    this.#refill()
    if (cost > this.#tokens) return false
    this.#tokens -= cost
    return true
  }

  /** True when the bucket has refilled completely. */
  get full(): boolean {
    this.#refill()
    return this.#tokens >= this.capacity
  }

  #refill(): void {
    const t = this.#now()
    if (t > this.#last) this.#tokens = Math.min(this.capacity, this.#tokens + (t - this.#last) * this.#ratePerMs)
    this.#last = t
  }
}
