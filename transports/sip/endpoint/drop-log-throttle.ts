/**
 * At most one log line per source address and interval for dropped SIP traffic: a flood is worth one line a
 * minute, not one per packet. What was dropped in between is counted by reason and reported with the next line,
 * each reason with its own count: a line triggered by one malformed packet after 40,000 rate-limited ones says
 * both, not "malformed" for all of them.
 */

/** Drops by reason that one log line stands for. */
export type DropCounts = Readonly<Record<string, number>>

interface Entry {
  at: number
  suppressed: Record<string, number>
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
   * A drop from `address` for `reason`: the drops this line stands for, by reason (this one and those not
   * logged since the last line), or `null` when it must not be logged.
   */
  record(address: string, reason: string): DropCounts | null {
    const now = this.#now()
    const entry = this.#entries.get(address)
    if (entry === undefined || now - entry.at >= this.#intervalMs) {
      const counts = { ...entry?.suppressed }
      counts[reason] = (counts[reason] ?? 0) + 1
      this.#entries.delete(address)
      if (this.#entries.size >= this.#maxSources) this.#entries.delete(this.#entries.keys().next().value as string)
      this.#entries.set(address, { at: now, suppressed: {} })
      return counts
    }
    entry.suppressed[reason] = (entry.suppressed[reason] ?? 0) + 1
    return null
  }
}
