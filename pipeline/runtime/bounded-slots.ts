import { abortError } from './abort.js'

/**
 * Bounded concurrency with a bounded wait: at most `size` holders at once and `maxWaiting` in line; one more is
 * refused at once rather than queued without end. Waiters leave the line when their signal aborts.
 */
export class BoundedSlots {
  readonly #size: number
  readonly #maxWaiting: number
  #held = 0
  readonly #line: Array<() => void> = []

  constructor(size: number, maxWaiting: number) {
    this.#size = size
    this.#maxWaiting = maxWaiting
  }

  /** True once a slot is held (release it); false at once when the line is full; rejects when `signal` aborts. */
  acquire(signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.reject(signal.reason ?? abortError())
    if (this.#held < this.#size) {
      this.#held++
      return Promise.resolve(true)
    }
    if (this.#line.length >= this.#maxWaiting) return Promise.resolve(false)
    return new Promise((resolve, reject) => {
      const take = () => {
        signal?.removeEventListener('abort', onAbort)
        resolve(true)
      }
      const onAbort = () => {
        const at = this.#line.indexOf(take)
        if (at >= 0) this.#line.splice(at, 1)
        reject(signal?.reason ?? abortError())
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#line.push(take)
    })
  }

  /** Gives a held slot back: to the first in line, if any. */
  release(): void {
    const next = this.#line.shift()
    if (next) next()
    else this.#held = Math.max(0, this.#held - 1)
  }
}
