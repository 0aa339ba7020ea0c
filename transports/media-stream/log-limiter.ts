import type { Log } from '../../core/log.js'

/**
 * Rate-limits one kind of log line: at most `perWindow` lines per window, then one summary of how many were
 * suppressed. A caller's phone sending garbage 50 times a second must not flood the log.
 */
export class LogLimiter {
  #windowStart = 0
  #count = 0
  #suppressed = 0

  readonly #log: Log
  readonly #perWindow: number
  readonly #windowMs: number
  constructor(log: Log, perWindow = 5, windowMs = 10_000) {
    this.#log = log
    this.#perWindow = perWindow
    this.#windowMs = windowMs
  }

  /** Logs `msg` at warn level unless this window's quota is used up. */
  warn(fields: Record<string, unknown>, msg: string, now = Date.now()): void {
    if (now - this.#windowStart >= this.#windowMs) {
      if (this.#suppressed > 0) this.#log.warn({ ...fields, suppressed: this.#suppressed }, `${msg} (and more, suppressed)`)
      this.#windowStart = now
      this.#count = 0
      this.#suppressed = 0
    }
    if (this.#count < this.#perWindow) {
      this.#count++
      this.#log.warn(fields, msg)
    } else {
      this.#suppressed++
    }
  }
}
