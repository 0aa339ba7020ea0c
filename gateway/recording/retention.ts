import type { Kysely } from 'kysely'
import type { Log } from '../../core/log.js'
import type { Database } from '../store/schema.js'
import { deleteRecordings, expiredRecordings } from '../store/recording-retention.js'
import { recordingObjectKeys, type RecordingObjectStore } from './object-store.js'

/** How often old recordings are looked for. */
const SWEEP_INTERVAL_MS = 60 * 60 * 1000
/** Recordings deleted per batch (one query and one object store request each). */
const BATCH = 500

/**
 * Deletes recordings past their retention (`days` for the process, RECORDING_RETENTION_DAYS; an agent's
 * `privacy.retention_days`, the shorter where both are set), at start and then hourly; every replica may run it (deletes are idempotent).
 * Files in the object store go first, then the rows: a failing store leaves both for the next sweep, never a row
 * whose file is gone nor (short of a crash between the two) a file no row points at.
 */
export class RecordingRetention {
  readonly #db: Kysely<Database>
  readonly #log: Log
  readonly #days: number | undefined
  readonly #objects: RecordingObjectStore | undefined
  #timer: NodeJS.Timeout | undefined
  constructor(db: Kysely<Database>, log: Log, days: number | undefined, objects?: RecordingObjectStore) {
    this.#db = db
    this.#log = log
    this.#days = days
    this.#objects = objects
  }

  start(): void {
    if (this.#timer !== undefined) return
    void this.sweep()
    this.#timer = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS)
    this.#timer.unref()
  }

  stop(): void {
    clearInterval(this.#timer)
  }

  /** Deletes what is older than the retention now; returns how many recordings went. */
  async sweep(now: Date = new Date()): Promise<number> {
    let total = 0
    try {
      for (;;) {
        const batch = await expiredRecordings(this.#db, now, this.#days, BATCH)
        if (batch.length === 0) break
        const keys = batch.flatMap((r) => (r.objectKey === null ? [] : Object.values(recordingObjectKeys(r.objectKey))))
        if (keys.length > 0) {
          if (this.#objects === undefined) throw new Error('recordings in an object store, but RECORDING_S3_BUCKET is not set')
          await this.#objects.delete(keys)
        }
        const n = await deleteRecordings(this.#db, batch)
        total += n
        if (batch.length < BATCH || n === 0) break
      }
    } catch (e) {
      this.#log.error({ err: e }, 'recording retention sweep failed')
    }
    if (total > 0) this.#log.info({ deleted: total, retention_days: this.#days }, 'old recordings deleted')
    return total
  }
}
