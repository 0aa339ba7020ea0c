/**
 * Recording chunks of every call a process records, written together. Each recorder hands over about a
 * second of audio per call and second; written one statement per call, that was hundreds of inserts a second at a
 * few hundred calls, and each cost the gateway's thread ~0.3 ms (the driver's messages, the socket write, the
 * answer). Here statements start at most once a window (100 ms): what is appended meanwhile waits for the next and
 * shares it, so 300 calls take about ten a second. An append after a quiet window is written at once (in the
 * same tick's batch), so a few calls see no added delay.
 *
 * A recorder keeps its own bound, retries and failure (recorder.ts): an append here resolves when its chunks are
 * stored and rejects with the database's error when they are not. One session's bad rows must not fail the others,
 * so a batch refused for any reason but the database being unavailable is written again one session at a time.
 */
import type { Kysely } from 'kysely'
import { isDatabaseUnavailable } from '../store/database-errors.js'
import type { Database } from '../store/schema.js'
import { appendRecordingChunkRows, type RecordingChunk, type RecordingChunkRow } from '../store/recording-chunks.js'

/** Bounds of a `ChunkBatches`; every one has a default. */
export interface ChunkBatchOptions {
  /** Least time between the starts of two statements. Default 100 ms. */
  windowMs?: number
  /** A batch with this many chunks is written at once. Default 400. */
  maxRows?: number
  /** A batch with this many bytes of audio is written at once. Default 4 MiB. */
  maxBytes?: number
  /** Writes rows (tests count the statements); default `appendRecordingChunkRows` on `db`. */
  write?: (rows: readonly RecordingChunkRow[]) => Promise<void>
}

interface PendingAppend {
  readonly sessionId: string
  readonly chunks: readonly RecordingChunk[]
  readonly resolve: () => void
  readonly reject: (e: unknown) => void
}

/** Appends of many recordings, written a batch at a time. */
export class ChunkBatches {
  readonly #db: Kysely<Database>
  readonly #windowMs: number
  readonly #maxRows: number
  readonly #maxBytes: number
  readonly #write: (rows: readonly RecordingChunkRow[]) => Promise<void>
  #pending: PendingAppend[] = []
  #rows = 0
  #bytes = 0
  /** Cancels the flush that is scheduled, if any. */
  #scheduled: (() => void) | undefined
  /** When the last statement started (performance.now()). */
  #lastStart = Number.NEGATIVE_INFINITY
  /** Statements written so far (the benchmark and tests read it). */
  statements = 0

  constructor(db: Kysely<Database>, options: ChunkBatchOptions = {}) {
    this.#db = db
    this.#windowMs = options.windowMs ?? 100
    this.#maxRows = options.maxRows ?? 400
    this.#maxBytes = options.maxBytes ?? 4 * 1024 * 1024
    this.#write = options.write ?? ((rows) => appendRecordingChunkRows(this.#db, rows))
  }

  /** Stores a session's chunks with the others of its window; settles once they are written (or not). */
  append(sessionId: string, chunks: readonly RecordingChunk[]): Promise<void> {
    if (chunks.length === 0) return Promise.resolve()
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ sessionId, chunks, resolve, reject })
      this.#rows += chunks.length
      for (const c of chunks) this.#bytes += c.pcm?.length ?? 0
      if (this.#rows >= this.#maxRows || this.#bytes >= this.#maxBytes) this.#flush()
      else if (this.#scheduled === undefined) {
        // Not unref'd: a recording being written keeps the process until it is stored (at most one window).
        const wait = this.#lastStart + this.#windowMs - performance.now()
        if (wait <= 0) {
          const immediate = setImmediate(() => this.#flush())
          this.#scheduled = () => clearImmediate(immediate)
        } else {
          const timer = setTimeout(() => this.#flush(), wait)
          this.#scheduled = () => clearTimeout(timer)
        }
      }
    })
  }

  #flush(): void {
    this.#scheduled?.()
    this.#scheduled = undefined
    this.#lastStart = performance.now()
    const batch = this.#pending
    this.#pending = []
    this.#rows = 0
    this.#bytes = 0
    if (batch.length > 0) void this.#store(batch)
  }

  async #store(batch: readonly PendingAppend[]): Promise<void> {
    const rows: RecordingChunkRow[] = []
    for (const p of batch) for (const chunk of p.chunks) rows.push({ sessionId: p.sessionId, chunk })
    try {
      this.statements++
      await this.#write(rows)
      for (const p of batch) p.resolve()
    } catch (e) {
      if (batch.length === 1 || isDatabaseUnavailable(e)) {
        // Every append in it would fail alike: each recorder decides (retry while unavailable, or fail).
        for (const p of batch) p.reject(e)
        return
      }
      // Which session's rows the database refused is not said: each session alone, so only that one fails.
      await Promise.all(
        batch.map(async (p) => {
          try {
            this.statements++
            await this.#write(p.chunks.map((chunk) => ({ sessionId: p.sessionId, chunk })))
            p.resolve()
          } catch (err) {
            p.reject(err)
          }
        }),
      )
    }
  }
}

const perDatabase = new WeakMap<Kysely<Database>, ChunkBatches>()

/** The batches of the recordings written to `db` (one per database handle, so one per gateway in a process). */
export function sharedChunkBatches(db: Kysely<Database>): ChunkBatches {
  let batches = perDatabase.get(db)
  if (batches === undefined) {
    batches = new ChunkBatches(db)
    perDatabase.set(db, batches)
  }
  return batches
}
