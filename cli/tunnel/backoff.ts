/** First wait before reconnecting. */
export const RETRY_FIRST_MS = 500
/** Longest wait between reconnection attempts. */
export const RETRY_MAX_MS = 10_000

/**
 * Waits between reconnection attempts: 0.5 s doubling to a cap (10 s), each drawn from its upper half so that
 * tunnels cut off together do not all come back at once. `reset` after a connection that worked.
 */
export class Backoff {
  #attempt = 0
  readonly #first: number
  constructor(
    readonly maxMs = RETRY_MAX_MS,
    readonly random: () => number = Math.random,
  ) {
    this.#first = Math.min(RETRY_FIRST_MS, maxMs)
  }

  /** Attempts since the last reset. */
  get attempt(): number {
    return this.#attempt
  }

  /** The wait before the next attempt. */
  next(): number {
    const ceiling = Math.min(this.maxMs, this.#first * 2 ** Math.min(this.#attempt, 30))
    this.#attempt += 1
    return Math.round(ceiling / 2 + (ceiling / 2) * this.random())
  }

  reset(): void {
    this.#attempt = 0
  }
}

/** The cap from `VOXGATE_TUNNEL_RETRY_MAX_MS` (tests shorten it), else {@link RETRY_MAX_MS}. */
export function retryMaxMs(env: NodeJS.ProcessEnv): number {
  const n = Number(env.VOXGATE_TUNNEL_RETRY_MAX_MS)
  return Number.isInteger(n) && n >= 50 && n <= 600_000 ? n : RETRY_MAX_MS
}
