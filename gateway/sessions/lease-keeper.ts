import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database, SessionRow } from '../store/schema.js'
import { renewLeases } from '../store/leases.js'
import { sweepExpiredSessions } from '../store/session-states.js'
import type { Log } from '../../core/log.js'

/**
 * Keeps this process's concurrency leases alive (one UPDATE per heartbeat for all its calls) and ends
 * sessions whose lease expired because their process died. Every replica runs one; the sweep is idempotent.
 */
export class LeaseKeeper {
  /** This process's lease owner id: host, pid and a random part (a restarted pid is a new owner). */
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
  #heartbeat: NodeJS.Timeout | undefined
  #sweeper: NodeJS.Timeout | undefined

  readonly #db: Kysely<Database>
  readonly #log: Log
  readonly #ratePerMinute: number
  readonly #onSwept: (row: SessionRow) => void
  constructor(
    db: Kysely<Database>,
    log: Log,
    readonly ttlMs: number,
    ratePerMinute: number,
    /** Called with each session the sweep ended, so its session.end webhook still goes out. */
    onSwept: (row: SessionRow) => void = () => undefined,
  ) {
    this.#db = db
    this.#log = log
    this.#ratePerMinute = ratePerMinute
    this.#onSwept = onSwept
  }

  /** Starts the timers and runs a first sweep. */
  async start(): Promise<void> {
    await this.sweep()
    this.#heartbeat = setInterval(() => void this.renew(), Math.max(1_000, Math.floor(this.ttlMs / 3)))
    this.#sweeper = setInterval(() => void this.sweep(), Math.max(1_000, Math.floor(this.ttlMs / 2)))
    this.#heartbeat.unref()
    this.#sweeper.unref()
  }

  /** Renews this process's leases now. */
  async renew(): Promise<void> {
    try {
      await renewLeases(this.#db, this.owner, this.ttlMs)
    } catch (e) {
      this.#log.warn({ err: e }, 'lease heartbeat failed; will retry')
    }
  }

  /** Ends every session whose lease has expired. */
  async sweep(): Promise<SessionRow[]> {
    try {
      const rows = await sweepExpiredSessions(this.#db, this.#ratePerMinute)
      for (const row of rows) {
        this.#log.warn({ session_id: row.id, lease_owner: row.lease_owner }, 'session ended: its process stopped renewing the lease')
        this.#onSwept(row)
      }
      return rows
    } catch (e) {
      this.#log.warn({ err: e }, 'lease sweep failed; will retry')
      return []
    }
  }

  /** Stops the timers (leases then expire on their own unless sessions released them). */
  stop(): void {
    clearInterval(this.#heartbeat)
    clearInterval(this.#sweeper)
  }
}
