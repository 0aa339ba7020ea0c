/**
 * A session's finished turns on their way to the database, one at a time and in order. The call never waits on
 * it: a turn is handed over and the conversation goes on. When the database cannot be reached (a restart, a
 * network cut), the head turn is retried with backoff until it is written or `giveUpAfterMs` passes, and later
 * turns wait behind it in a bounded buffer: beyond `maxPending` the newest are dropped (and counted), so what was
 * said first, which the rest of a transcript builds on, is what survives. Any other failure (bad data) is logged
 * and that turn skipped. Writes must be idempotent (the store's insert ignores a turn already there), because a
 * write whose answer was lost with the connection is written again.
 */
import type { Log } from '../../../core/log.js'
import { RETRY_BACKOFF_MS, retryWhileUnavailable } from '../../store/database-errors.js'

export interface TranscriptWriterOptions<T> {
  /** Writes one entry (idempotent). */
  write(entry: PendingTurn<T>): Promise<void>
  /** True when a failure means "database not reachable now": retry instead of skipping. */
  isTransient(e: unknown): boolean
  log: Log
  sessionId: string
  /** Turns waiting at most (the one being written included). */
  maxPending?: number
  /** Retry delays, the last one repeated. */
  backoffMs?: readonly number[]
  /** A turn not written within this long after its first failure is given up (and logged). */
  giveUpAfterMs?: number
}

/** One finished turn and its place in the session's transcript. */
export interface PendingTurn<T> {
  readonly seq: number
  readonly turn: T
}

export const TRANSCRIPT_MAX_PENDING = 500
export const TRANSCRIPT_GIVE_UP_MS = 10 * 60_000
/** How long a session's end waits for its turns to be written before it goes on without them. */
export const TRANSCRIPT_FLUSH_AT_END_MS = 10_000

export class TranscriptWriter<T> {
  readonly #o: Required<TranscriptWriterOptions<T>>
  readonly #queue: PendingTurn<T>[] = []
  #running: Promise<void> | undefined
  readonly #abort = new AbortController()
  /** Turns dropped because the buffer was full, or given up after retrying. */
  dropped = 0
  /** Turns that needed at least one retry. */
  retried = 0

  constructor(options: TranscriptWriterOptions<T>) {
    this.#o = {
      maxPending: TRANSCRIPT_MAX_PENDING,
      backoffMs: RETRY_BACKOFF_MS,
      giveUpAfterMs: TRANSCRIPT_GIVE_UP_MS,
      ...options,
    }
  }

  /** Queues a finished turn; never waits and never throws. */
  add(entry: PendingTurn<T>): void {
    if (this.#abort.signal.aborted) return
    if (this.#queue.length >= this.#o.maxPending) {
      this.dropped += 1
      if (this.dropped === 1 || this.dropped % 100 === 0) {
        this.#o.log.error({ session_id: this.#o.sessionId, dropped: this.dropped }, 'transcript buffer full: newest turns dropped')
      }
      return
    }
    this.#queue.push(entry)
    this.#running ??= this.#drain().finally(() => {
      this.#running = undefined
    })
  }

  /** Turns not yet written. */
  get pending(): number {
    return this.#queue.length
  }

  /** Resolves when every queued turn is written or given up, or after `timeoutMs`: true when all were. */
  async flushed(timeoutMs: number): Promise<boolean> {
    const running = this.#running
    if (running === undefined) return true
    let timer: NodeJS.Timeout | undefined
    const done = await Promise.race([
      running.then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs)
      }),
    ])
    clearTimeout(timer)
    return done
  }

  /** Stops retrying (process shutdown): each queued turn gets one more try, then is given up. */
  close(): void {
    this.#abort.abort()
  }

  async #drain(): Promise<void> {
    for (let entry = this.#queue[0]; entry !== undefined; entry = this.#queue[0]) {
      await this.#writeOne(entry)
      this.#queue.shift()
    }
  }

  async #writeOne(entry: PendingTurn<T>): Promise<void> {
    const fields = { session_id: this.#o.sessionId, seq: entry.seq }
    let retried = false
    try {
      await retryWhileUnavailable(() => this.#o.write(entry), {
        forMs: this.#o.giveUpAfterMs,
        isTransient: this.#o.isTransient,
        backoffMs: this.#o.backoffMs,
        signal: this.#abort.signal,
        onRetry: (e) => {
          retried = true
          this.retried += 1
          this.#o.log.warn({ err: e, ...fields }, 'database unavailable: transcript turn kept for retry')
        },
      })
      if (retried) this.#o.log.info(fields, 'transcript turn written after retries')
    } catch (e) {
      if (!this.#o.isTransient(e)) {
        this.#o.log.error({ err: e, ...fields }, 'transcript write failed')
        return
      }
      this.dropped += 1
      this.#o.log.error({ err: e, ...fields }, 'transcript turn given up')
    }
  }
}
