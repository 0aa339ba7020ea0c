/**
 * At most one log line per source address and interval for dropped SIP traffic: a flood is worth one line a
 * minute, not one per packet. What was dropped in between is counted and reported with the next line.
 */

interface Entry {
  at: number
  suppressed: number
}

/** Decides which drops are logged. Bounded like the rate limiter: the oldest address is forgotten first. */
export class DropLogThrottle {
  readonly #intervalMs: number
  readonly #maxSources: number
  readonly #now: () => number
  readonly #entries = new Map<string, Entry>()

  constructor(intervalMs = 60_000, maxSources = 10_000, now: () => number = Date.now) {
    this.#intervalMs = intervalMs
    this.#maxSources = maxSources
    this.#now = now
  }

  /**
   * A drop from `address`: the number of drops this line stands for (this one and those not logged since the
   * last line), or 0 when it must not be logged.
   */
  record(address: string): number {
    const now = this.#now()
    const entry = this.#entries.get(address)
    if (entry === undefined || now - entry.at >= this.#intervalMs) {
      const count = (entry?.suppressed ?? 0) + 1
      this.#entries.delete(address)
      if (this.#entries.size >= this.#maxSources) this.#entries.delete(this.#entries.keys().next().value as string)
      this.#entries.set(address, { at: now, suppressed: 0 })
      return count
    }
    entry.suppressed++
    return 0
  }
}
