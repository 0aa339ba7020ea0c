/**
 * A token bucket per source address: each request takes a token, tokens come back at `ratePerSecond` up to
 * `burst`. A flood from one address is cut without touching anyone else's. The table is bounded: past
 * `maxSources` the least recently seen address is forgotten (it starts again with a full bucket, which costs a
 * spoofing flood more than it gains).
 */

/** Limiter settings. */
export interface SourceRateLimits {
  readonly ratePerSecond: number
  readonly burst: number
  readonly maxSources?: number
}

/** The default: 20 requests a second, bursts of 40, 10,000 addresses remembered. */
export const DEFAULT_SOURCE_RATE_LIMITS: Required<SourceRateLimits> = { ratePerSecond: 20, burst: 40, maxSources: 10_000 }

interface Bucket {
  tokens: number
  at: number
}

/** Per-address token buckets on an injected clock. */
export class SourceRateLimiter {
  readonly #rate: number
  readonly #burst: number
  readonly #maxSources: number
  readonly #now: () => number
  readonly #buckets = new Map<string, Bucket>()

  constructor(limits: SourceRateLimits = DEFAULT_SOURCE_RATE_LIMITS, now: () => number = Date.now) {
    this.#rate = limits.ratePerSecond
    this.#burst = limits.burst
    this.#maxSources = limits.maxSources ?? DEFAULT_SOURCE_RATE_LIMITS.maxSources
    this.#now = now
  }

  /** Addresses remembered. */
  get size(): number {
    return this.#buckets.size
  }

  /** Takes a token for `address`; false when its bucket is empty and the request must be dropped. */
  take(address: string): boolean {
    const now = this.#now()
    const bucket = this.#buckets.get(address)
    if (bucket === undefined) {
      if (this.#buckets.size >= this.#maxSources) this.#buckets.delete(this.#buckets.keys().next().value as string)
      this.#buckets.set(address, { tokens: this.#burst - 1, at: now })
      return true
    }
    // Re-inserted so the map's order is least recently seen first.
    this.#buckets.delete(address)
    this.#buckets.set(address, bucket)
    bucket.tokens = Math.min(this.#burst, bucket.tokens + ((now - bucket.at) / 1000) * this.#rate)
    bucket.at = now
    if (bucket.tokens < 1) return false
    bucket.tokens -= 1
    return true
  }
}
