// Test helper: reads a vendor stream in the background so tests can wait for events by predicate.

/** Collects every event of an async iterable and lets a test wait for one. */
export class EventReader<E extends { type: string }> {
  readonly events: E[] = []
  readonly ended: Promise<void>
  #listeners = new Set<() => void>()
  #done = false

  constructor(source: AsyncIterable<E>) {
    this.ended = (async () => {
      for await (const event of source) {
        this.events.push(event)
        this.#notify()
      }
      this.#done = true
      this.#notify()
    })()
  }

  /** Event types so far, in order. */
  get types(): string[] {
    return this.events.map((event) => event.type)
  }

  /** Resolve with the first event (from index `from`) matching `predicate`. */
  waitFor(predicate: (event: E) => boolean, timeoutMs = 3000, from = 0): Promise<E> {
    const find = () => this.events.slice(from).find(predicate)
    const found = find()
    if (found) return Promise.resolve(found)
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = find()
        if (match) {
          cleanup()
          resolve(match)
        } else if (this.#done) {
          cleanup()
          reject(new Error(`stream ended without the awaited event; got ${this.types.join(',')}`))
        }
      }
      const timer = setTimeout(() => {
        cleanup()
        reject(new Error(`timed out waiting for an event; got ${this.types.join(',')}`))
      }, timeoutMs)
      const cleanup = () => {
        clearTimeout(timer)
        this.#listeners.delete(check)
      }
      this.#listeners.add(check)
    })
  }

  /** Resolve with the first event of `type`. */
  waitForType<T extends E['type']>(type: T, timeoutMs?: number, from?: number): Promise<Extract<E, { type: T }>> {
    return this.waitFor((event) => event.type === type, timeoutMs, from) as Promise<Extract<E, { type: T }>>
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener()
  }
}

/** Resolve after `ms`. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** `n` bytes of recognisable audio: byte i = (seed + i) mod 256. */
export function audioBytes(n: number, seed = 0): Buffer {
  const out = Buffer.alloc(n)
  for (let i = 0; i < n; i++) out[i] = (seed + i) & 0xff
  return out
}

/** Fast transport settings for tests. */
export const FAST_TRANSPORT = {
  reconnect: { maxAttempts: 3, initialDelayMs: 10, maxDelayMs: 50, stableAfterMs: 60_000 },
  closeTimeoutMs: 1000,
} as const

/** Events with a final's word timings left out (tests of the text mapping; the timings are tested on their own). */
export function withoutWords<E extends { type: string }>(events: readonly E[]): Omit<E, 'words'>[] {
  return events.map((e) => {
    if (!('words' in e)) return e
    const { words: _words, ...rest } = e as E & { words: unknown }
    return rest
  })
}
