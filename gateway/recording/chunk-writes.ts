/**
 * A recorder's writes: its chunks queue here and go to the sink in batches, one write at a time, behind the audio
 * path. The queue is bounded in bytes (a store that falls behind fails the recording, never the call), and a batch
 * the sink could not take for a transient reason (the database restarting) is written again for a while.
 */
import { retryWhileUnavailable } from '../store/database-errors.js'
import type { RecordingChunk } from '../store/recording-chunks.js'
import { giveBackChunkBuffers } from './chunk-buffers.js'
import type { RecordingSink } from './recording-port.js'

/** Waits between retries of a batch the sink could not take for a transient reason. */
const RETRY_BACKOFF_MS = [100, 250, 500, 1000, 2000] as const

/** What the writes are bounded and retried by (a recorder's options). */
export interface ChunkWritesOptions {
  readonly sink: RecordingSink
  /** Bytes waiting for the sink above which the recording fails. Default 1 MiB. */
  readonly maxQueuedBytes?: number | undefined
  /** True for a sink failure worth retrying. */
  readonly isTransient?: ((e: unknown) => boolean) | undefined
  /** How long transient failures are retried. Default 60 s. */
  readonly retryForMs?: number | undefined
}

/** The recording's side of the writes: when the sink is ready, whether it failed, and failing it. */
export interface ChunkWritesOwner {
  started(): Promise<void> | undefined
  failed(): boolean
  fail(error: string): void
}

/** The queue of one recorder's chunks on their way to the sink. */
export class ChunkWrites {
  readonly #opts: ChunkWritesOptions
  readonly #owner: ChunkWritesOwner
  #queue: RecordingChunk[] = []
  #queuedBytes = 0
  #writing: Promise<void> | undefined

  constructor(options: ChunkWritesOptions, owner: ChunkWritesOwner) {
    this.#opts = options
    this.#owner = owner
  }

  /** Settles once what is queued now was written (or given up); undefined when nothing is being written. */
  get written(): Promise<void> | undefined {
    return this.#writing
  }

  enqueue(chunk: RecordingChunk): void {
    const bytes = (chunk.pcm?.length ?? 0) + 64
    if (this.#queuedBytes + bytes > (this.#opts.maxQueuedBytes ?? 1024 * 1024)) {
      this.#owner.fail('recording storage fell behind: audio was dropped')
      return
    }
    this.#queue.push(chunk)
    this.#queuedBytes += bytes
    this.#writing ??= this.#drain()
  }

  /** Drops what waits (the recording failed). */
  clear(): void {
    this.#queue = []
    this.#queuedBytes = 0
  }

  /** Writes queued chunks in batches, one statement at a time, until the queue is empty. */
  async #drain(): Promise<void> {
    try {
      await this.#owner.started()
      const isTransient = this.#opts.isTransient ?? (() => false)
      while (this.#queue.length > 0 && !this.#owner.failed()) {
        const batch = this.#queue
        this.#queue = []
        try {
          // What comes meanwhile waits in the queue behind it, still counted against the queue's bound.
          await retryWhileUnavailable(() => this.#opts.sink.append(batch), {
            forMs: this.#opts.retryForMs ?? 60_000,
            isTransient,
            backoffMs: RETRY_BACKOFF_MS,
          })
        } catch (e) {
          this.#owner.fail(`recording storage failed: ${e instanceof Error ? e.message : String(e)}`)
        }
        for (const c of batch) this.#queuedBytes = Math.max(0, this.#queuedBytes - (c.pcm?.length ?? 0) - 64)
        giveBackChunkBuffers(batch) // the sink has settled: nothing reads them any more
      }
    } finally {
      this.#writing = undefined
    }
  }
}
