/** Options of {@link AsyncQueue}. */
export interface AsyncQueueOptions<T> {
  /** Most items held at once; pushing past it applies the drop policy. */
  capacity: number
  /** Items the queue may discard first when full (e.g. interim transcripts). Default: none. */
  isDroppable?: (item: T) => boolean
  /** Called with each item the drop policy discards, so the owner can log it. */
  onDrop?: (item: T) => void
}

/**
 * A bounded, single-producer async queue consumed as an async iterable.
 *
 * Drop policy when full: discard the oldest item that `isDroppable` accepts; if there is none, discard the
 * oldest item of all. The newest item is always kept, because for speech the latest state matters most.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  readonly #items: T[] = []
  readonly #waiters: Array<(result: IteratorResult<T, undefined>) => void> = []
  readonly #capacity: number
  readonly #isDroppable: (item: T) => boolean
  readonly #onDrop: ((item: T) => void) | undefined
  #ended = false
  #dropped = 0

  constructor(options: AsyncQueueOptions<T>) {
    if (!Number.isInteger(options.capacity) || options.capacity < 1) {
      throw new RangeError('AsyncQueue capacity must be a positive integer')
    }
    this.#capacity = options.capacity
    this.#isDroppable = options.isDroppable ?? (() => false)
    this.#onDrop = options.onDrop
  }

  /** Items waiting to be read. */
  get size(): number {
    return this.#items.length
  }

  /** How many items the drop policy has discarded so far. */
  get dropped(): number {
    return this.#dropped
  }

  /** True once {@link end} was called. */
  get ended(): boolean {
    return this.#ended
  }

  /** Add an item; returns false (and keeps nothing) when the queue has ended. */
  push(item: T): boolean {
    if (this.#ended) return false
    const waiter = this.#waiters.shift()
    if (waiter) {
      waiter({ done: false, value: item })
      return true
    }
    if (this.#items.length >= this.#capacity) {
      let index = this.#items.findIndex((queued) => this.#isDroppable(queued))
      if (index < 0) index = 0
      const [discarded] = this.#items.splice(index, 1)
      this.#dropped++
      if (discarded !== undefined) this.#onDrop?.(discarded)
    }
    this.#items.push(item)
    return true
  }

  /** No more items: readers drain what is queued, then finish. Idempotent. */
  end(): void {
    if (this.#ended) return
    this.#ended = true
    for (const waiter of this.#waiters.splice(0)) waiter({ done: true, value: undefined })
  }

  /** The next item, or done once ended and drained; an aborted signal rejects with its reason. */
  next(options: { signal?: AbortSignal } = {}): Promise<IteratorResult<T, undefined>> {
    const item = this.#items.shift()
    if (item !== undefined) return Promise.resolve({ done: false, value: item })
    if (this.#ended) return Promise.resolve({ done: true, value: undefined })
    const { signal } = options
    if (signal?.aborted) return Promise.reject(signal.reason)
    return new Promise((resolve, reject) => {
      const waiter = (result: IteratorResult<T, undefined>) => {
        signal?.removeEventListener('abort', onAbort)
        resolve(result)
      }
      const onAbort = () => {
        const index = this.#waiters.indexOf(waiter)
        if (index >= 0) this.#waiters.splice(index, 1)
        reject(signal?.reason)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#waiters.push(waiter)
    })
  }

  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    return { next: () => this.next() }
  }
}
