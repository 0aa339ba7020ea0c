import type { Kysely } from 'kysely'
import type { Log } from '../../core/log.js'
import type { Database } from '../store/schema.js'
import { markRecordingMoved, recordingsToMove, type RecordingToMove } from '../store/recording-moves.js'
import { recordingObjectKey, recordingObjectKeys, type RecordingObjectStore } from './object-store.js'
import { wavBytes, wavSize, type WavFile } from './wav-stream.js'

/** How often recordings left in the database (a failed move, a replica that stopped) are looked for. */
const SWEEP_INTERVAL_MS = 60_000
/** A sweep leaves recordings finished this recently to the replica that finished them. */
const SWEEP_GRACE_MS = 60_000
/** Recordings waiting to move in this process; beyond it they wait for a sweep (still served from the database). */
const MAX_WAITING = 100

/**
 * Moves finished recordings from the database to the object store: the stereo file and its mono mixdown, streamed
 * from the chunks (bounded memory), one recording at a time. Until its move completes a recording is served from
 * the database, so a failing store loses nothing: the sweep tries again. Any replica may move any recording; two
 * moving the same one write the same objects.
 */
export class RecordingMover {
  readonly #db: Kysely<Database>
  readonly #log: Log
  readonly #objects: RecordingObjectStore
  readonly #prefix: string
  readonly #waiting: RecordingToMove[] = []
  readonly #abort = new AbortController()
  #running: Promise<void> | undefined
  #timer: NodeJS.Timeout | undefined

  constructor(deps: { db: Kysely<Database>; log: Log; objects: RecordingObjectStore; prefix: string }) {
    this.#db = deps.db
    this.#log = deps.log
    this.#objects = deps.objects
    this.#prefix = deps.prefix
  }

  /** Sweeps now and every minute. */
  start(): void {
    if (this.#timer !== undefined) return
    void this.sweep()
    this.#timer = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS)
    this.#timer.unref()
  }

  /** A recording this process just completed. */
  moveSoon(rec: RecordingToMove): void {
    if (this.#abort.signal.aborted || this.#waiting.length >= MAX_WAITING) return
    this.#waiting.push(rec)
    this.#running ??= this.#drain()
  }

  /** Queues recordings left in the database; resolves when this process's queue is empty. */
  async sweep(now: Date = new Date(), graceMs = SWEEP_GRACE_MS): Promise<void> {
    try {
      const found = await recordingsToMove(this.#db, new Date(now.getTime() - graceMs), MAX_WAITING - this.#waiting.length)
      for (const rec of found) if (!this.#waiting.some((w) => w.sessionId === rec.sessionId)) this.moveSoon(rec)
    } catch (e) {
      this.#log.error({ err: e }, 'could not look for recordings to move to the object store')
    }
    await this.idle()
  }

  /** Resolves when nothing is waiting or moving. */
  async idle(): Promise<void> {
    while (this.#running !== undefined) await this.#running
  }

  /** Stops: the recording being moved stays in the database (its upload is aborted). */
  async close(): Promise<void> {
    clearInterval(this.#timer)
    this.#waiting.length = 0
    this.#abort.abort()
    await this.#running
    this.#objects.close()
  }

  async #drain(): Promise<void> {
    try {
      for (let rec = this.#waiting.shift(); rec !== undefined; rec = this.#waiting.shift()) await this.#move(rec)
    } finally {
      this.#running = undefined
    }
  }

  async #move(rec: RecordingToMove): Promise<void> {
    const signal = this.#abort.signal
    const keys = recordingObjectKeys(recordingObjectKey(this.#prefix, rec.organizationId, rec.sessionId))
    try {
      for (const [key, channels] of [
        [keys.stereo, 2],
        [keys.mono, 1],
      ] as const) {
        const file: WavFile = { sessionId: rec.sessionId, sampleRate: rec.sampleRate, totalSamples: rec.totalSamples, channels }
        const size = wavSize(file)
        await this.#objects.put(key, wavBytes(this.#db, file, 0, size - 1, signal), size, signal)
      }
      if (!(await markRecordingMoved(this.#db, rec.sessionId, keys.stereo))) {
        // Deleted while it was moving: its files must not outlive it.
        await this.#objects.delete([keys.stereo, keys.mono])
        return
      }
      this.#log.info({ session_id: rec.sessionId }, 'recording moved to the object store')
    } catch (e) {
      if (signal.aborted) return
      this.#log.warn({ err: e, session_id: rec.sessionId }, 'recording could not be moved to the object store; it stays in the database')
    }
  }
}
