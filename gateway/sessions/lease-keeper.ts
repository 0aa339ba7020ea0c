import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database, SessionRow } from '../store/schema.js'
import { renewLeases } from '../store/leases.js'
import { sweepExpiredSessions } from '../store/session-ends.js'
import type { Log } from '../../core/log.js'

/** What the keeper tells its process. */
export interface LeaseEvents {
  /** Called with each session the sweep ended, so its session.end webhook still goes out. */
  onSwept?: (row: SessionRow) => void
  /** The sessions this process runs now (their rows are connected and hold a lease of ours). */
  liveIds?: () => readonly string[]
  /** A session of `liveIds` whose lease the heartbeat found gone: it must end at once. */
  onLeaseLost?: (sessionId: string) => void
}

/**
 * Keeps this process's concurrency leases alive (one UPDATE per heartbeat for all its calls) and ends
 * sessions whose lease expired because their process died. Every replica runs one; the sweep is idempotent.
 *
 * Leases fence: a lease is renewed only while it has not expired. A process that stalled past its lease (a
 * long pause, SIGSTOP) finds at its next heartbeat that the lease is gone, possibly swept by another replica
 * that has since admitted other sessions in its place, and ends those sessions at once instead of running on
 * uncounted; so the concurrency limit is exceeded for at most one heartbeat after such a stall.
 */
export class LeaseKeeper {
  /** This process's lease owner id: host, pid and a random part (a restarted pid is a new owner). */
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
  #heartbeat: NodeJS.Timeout | undefined
  #sweeper: NodeJS.Timeout | undefined

  readonly #db: Kysely<Database>
  readonly #log: Log
  readonly #ratePerMinute: number
  readonly #events: LeaseEvents
  constructor(
    db: Kysely<Database>,
    log: Log,
    readonly ttlMs: number,
    ratePerMinute: number,
    events: LeaseEvents = {},
  ) {
    this.#db = db
    this.#log = log
    this.#ratePerMinute = ratePerMinute
    this.#events = events
  }

  /** Starts the timers and runs a first sweep. */
  async start(): Promise<void> {
    await this.sweep()
    this.#heartbeat = setInterval(() => void this.renew(), Math.max(1_000, Math.floor(this.ttlMs / 3)))
    this.#sweeper = setInterval(() => void this.sweep(), Math.max(1_000, Math.floor(this.ttlMs / 2)))
    this.#heartbeat.unref()
    this.#sweeper.unref()
  }

  /** Renews this process's leases now; a live session whose lease is gone is reported lost. */
  async renew(): Promise<void> {
    // Taken before the UPDATE: a session opened after it started is not in it, and must not count as lost.
    const live = this.#events.liveIds?.() ?? []
    let renewed: Set<string>
    try {
      renewed = new Set(await renewLeases(this.#db, this.owner, this.ttlMs))
    } catch (e) {
      this.#log.warn({ err: e }, 'lease heartbeat failed; will retry')
      return
    }
    for (const id of live) if (!renewed.has(id)) this.#events.onLeaseLost?.(id)
  }

  /** Ends every session whose lease has expired. */
  async sweep(): Promise<SessionRow[]> {
    try {
      const rows = await sweepExpiredSessions(this.#db, this.#ratePerMinute)
      for (const row of rows) {
        this.#log.warn({ session_id: row.id, lease_owner: row.lease_owner }, 'session ended: its process stopped renewing the lease')
        this.#events.onSwept?.(row)
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
