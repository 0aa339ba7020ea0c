import type { Kysely } from 'kysely'
import type { Log } from '../../../core/log.js'
import type { Database } from '../../store/schema.js'
import { deleteRecordingsBefore } from '../../store/recordings.js'

/** How often old recordings are looked for. */
const SWEEP_INTERVAL_MS = 60 * 60 * 1000

/** Deletes recordings older than `days`, at start and then hourly; every replica may run it (deletes are idempotent). */
export class RecordingRetention {
  readonly #db: Kysely<Database>
  readonly #log: Log
  readonly #days: number
  #timer: NodeJS.Timeout | undefined
  constructor(db: Kysely<Database>, log: Log, days: number) {
    this.#db = db
    this.#log = log
    this.#days = days
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
    try {
      const n = await deleteRecordingsBefore(this.#db, new Date(now.getTime() - this.#days * 86_400_000))
      if (n > 0) this.#log.info({ deleted: n, retention_days: this.#days }, 'old recordings deleted')
      return n
    } catch (e) {
      this.#log.error({ err: e }, 'recording retention sweep failed')
      return 0
    }
  }
}
