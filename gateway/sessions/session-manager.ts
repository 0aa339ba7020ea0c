import type { SessionRow } from '../store/schema.js'
import { startSessionWithKey, type KeyProblem } from '../store/session-states.js'
import { sendDetachedSessionEnd } from './detached-session-end.js'
import { CallSession, type SessionDeps, type SessionTransport } from './call-session.js'
import { LeaseKeeper } from './lease-keeper.js'
import { NO_METRICS, type Metrics } from '../../core/metrics.js'

/** Why a key did not open a session. */
export type OpenRefusal = KeyProblem | 'concurrency_limit' | 'insufficient_balance' | 'shutting_down' | 'error'

/** Result of presenting a key. */
export type OpenResult = { ok: true; session: CallSession } | { ok: false; reason: OpenRefusal }

/**
 * The process's sessions: opens them from keys (consuming the key and taking a concurrency slot in one
 * transaction), keeps their leases alive, and on shutdown refuses new ones and ends the live ones cleanly.
 */
export class SessionManager {
  readonly live = new Map<string, CallSession>()
  readonly keeper: LeaseKeeper
  #draining = false

  readonly #deps: SessionDeps
  constructor(deps: SessionDeps, leaseTtlMs: number) {
    this.#deps = deps
    this.keeper = new LeaseKeeper(deps.db, deps.log, leaseTtlMs, deps.usageRatePerMinute, (row) => void this.#notifySwept(row))
  }

  /** Starts the lease heartbeat and the sweeper (which first ends sessions orphaned by a crash). */
  async start(): Promise<void> {
    await this.keeper.start()
  }

  /** Where the process's sessions are counted. */
  get metrics(): Metrics {
    return this.#deps.metrics ?? NO_METRICS
  }

  /** True once shutdown began: transports refuse new connections. */
  get isDraining(): boolean {
    return this.#draining
  }

  /** Presents a client_session_key: on success the session is connected and its lease held. */
  async open(
    key: string,
    transport: SessionTransport,
    origin: { ipAddress: string | null; countryCode: string | null },
  ): Promise<OpenResult> {
    const result = await this.#open(key, transport, origin)
    if (result.ok) this.metrics.sessionStarted(transport.kind)
    else this.metrics.sessionRefused(transport.kind, result.reason)
    return result
  }

  async #open(
    key: string,
    transport: SessionTransport,
    origin: { ipAddress: string | null; countryCode: string | null },
  ): Promise<OpenResult> {
    if (this.#draining) return { ok: false, reason: 'shutting_down' }
    const started = await startSessionWithKey(this.#deps.db, {
      key,
      leaseOwner: this.keeper.owner,
      leaseTtlMs: this.keeper.ttlMs,
      ipAddress: origin.ipAddress,
      countryCode: origin.countryCode,
    })
    if (!started.ok) return started
    let session: CallSession
    try {
      session = await CallSession.begin(this.#deps, started.row, transport)
    } catch {
      return { ok: false, reason: 'error' }
    }
    this.live.set(session.id, session)
    void session.ended.then(() => {
      this.live.delete(session.id)
      // Let the session.end webhook finish in the background; shutdown waits for it.
      void session.drainWebhooks(60_000)
    })
    return { ok: true, session }
  }

  /** Stops new sessions, ends live ones with `shutdown`, waits for their webhooks up to `graceMs`. */
  async shutdown(graceMs: number): Promise<void> {
    this.#draining = true
    const sessions = [...this.live.values()]
    await Promise.all(sessions.map((s) => s.end('shutdown')))
    const deadline = Date.now() + graceMs
    await Promise.all(sessions.map((s) => s.drainWebhooks(Math.max(0, deadline - Date.now()))))
    this.keeper.stop()
  }

  /** Sends session.end for a session the sweeper ended (its own process died before it could). */
  #notifySwept(row: SessionRow): Promise<void> {
    return sendDetachedSessionEnd(this.#deps, row)
  }
}
