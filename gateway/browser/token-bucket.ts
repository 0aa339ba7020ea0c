/**
 * A token bucket: holds at most `capacity` tokens, refills `ratePerMs` tokens per millisecond of wall clock, and
 * starts full. The clock is injected so tests can drive it.
 */
export class TokenBucket {
  private tokens: number
  private last: number

  constructor(
    readonly capacity: number,
    private readonly ratePerMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = capacity
    this.last = now()
  }

  /** Takes `cost` tokens if there are that many; false (and nothing taken) otherwise. */
  take(cost: number): boolean {
    this.refill()
    if (cost > this.tokens) return false
    this.tokens -= cost
    return true
  }

  /** True when the bucket has refilled completely. */
  get full(): boolean {
    this.refill()
    return this.tokens >= this.capacity
  }

  private refill(): void {
    const t = this.now()
    if (t > this.last) this.tokens = Math.min(this.capacity, this.tokens + (t - this.last) * this.ratePerMs)
    this.last = t
  }
}
