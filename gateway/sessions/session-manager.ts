import type { SessionRow } from '../store/schema.js'
import { startSessionWithKey, type KeyProblem } from '../store/session-keys.js'
import { hasTopic, LocalNotifications, type Notifications } from '../store/notifications.js'
import { connectedCallsWithFinalStatus } from '../store/carrier-calls.js'
import { decodeSessionCommand, encodeSessionCommand, type RemoteEndReason, type SessionCommand } from './session-command-codec.js'
import { sendDetachedSessionEnd } from './detached-session-end.js'
import { CallSession } from './call-session.js'
import type { SessionDeps } from './session-deps.js'
import type { SessionTransport } from './ports/session-port.js'
import { LeaseKeeper } from './lease-keeper.js'
import { NO_METRICS, type Metrics } from '../../core/metrics.js'
import type { MachineVerdict } from '../../core/machine-verdict.js'

/** How long shutdown waits for the `session.end` webhooks of the sessions it ended. */
export const SHUTDOWN_WEBHOOK_DRAIN_MS = 5_000

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
  /** Set once the grace period is over: from then on no key opens a session here, held slot or not. */
  #closed = false
  #unsubscribe: () => void = () => undefined

  readonly #deps: SessionDeps
  readonly #notifications: Notifications
  /**
   * `notifications` carries commands between the replicas on one database (the store's channel); the default,
   * a channel of its own, suits a manager that is alone in its process.
   */
  constructor(deps: SessionDeps, leaseTtlMs: number, notifications: Notifications = new LocalNotifications()) {
    this.#deps = deps
    this.#notifications = notifications
    this.keeper = new LeaseKeeper(deps.db, deps.log, leaseTtlMs, deps.usageRatePerMinute, {
      onSwept: (row) => void this.#notifySwept(row),
      liveIds: () => [...this.live.keys()],
      onLeaseLost: (id) => this.#leaseLost(id),
    })
  }

  /** Starts listening for commands, the lease heartbeat and the sweeper (which first ends sessions orphaned by a crash). */
  async start(): Promise<void> {
    this.#unsubscribe = this.#notifications.subscribe({
      message: (payload) => this.#onCommand(payload),
      resync: () => void this.#resync(),
    })
    await this.keeper.start()
  }

  /** Where the process's sessions are counted. */
  get metrics(): Metrics {
    return this.#deps.metrics ?? NO_METRICS
  }

  /**
   * Ends a session wherever it runs: here at once, otherwise the replica that runs it is told (at most once:
   * a replica that missed it catches up from the tables when its listener reconnects, see `#resync`).
   */
  async endAnywhere(sessionId: string, reason: RemoteEndReason): Promise<void> {
    const local = this.live.get(sessionId)
    if (local !== undefined) {
      void local.end(reason)
      return
    }
    await this.#notifications.publish(encodeSessionCommand({ kind: 'end', sessionId, reason }))
  }

  #onCommand(payload: string): void {
    if (hasTopic(payload)) return
    const decoded = decodeSessionCommand(payload)
    if (!decoded.ok) {
      this.#deps.log.warn({ reason: decoded.reason }, 'session command ignored')
      return
    }
    this.#apply(decoded.command)
  }

  /** Tells the session of a call, wherever it runs, what answered it (answering machine detection). */
  async verdictAnywhere(sessionId: string, verdict: MachineVerdict): Promise<void> {
    const local = this.live.get(sessionId)
    if (local !== undefined) {
      local.machineVerdict(verdict)
      return
    }
    await this.#notifications.publish(encodeSessionCommand({ kind: 'machine_verdict', sessionId, verdict }))
  }

  #apply(c: SessionCommand): void {
    const session = this.live.get(c.sessionId)
    if (session === undefined || session.isEnded) return
    if (c.kind === 'machine_verdict') {
      session.machineVerdict(c.verdict)
      return
    }
    this.#deps.log.info({ session_id: c.sessionId, reason: c.reason }, 'session ended by another replica')
    void session.end(c.reason)
  }

  /** After a lost listener reconnected: calls the carrier reported finished meanwhile end here too. */
  async #resync(): Promise<void> {
    const ids = [...this.live.keys()]
    if (ids.length === 0) return
    try {
      for (const id of await connectedCallsWithFinalStatus(this.#deps.db, ids))
        this.#apply({ kind: 'end', sessionId: id, reason: 'caller_hangup' })
    } catch (e) {
      this.#deps.log.warn({ err: e }, 'could not resync sessions after the listener reconnected')
    }
  }

  /** Another replica swept this session's lease (this process stalled past it): it must not run on. */
  #leaseLost(sessionId: string): void {
    const session = this.live.get(sessionId)
    if (session === undefined || session.isEnded) return
    this.#deps.log.warn({ session_id: sessionId }, 'session ended: its lease was lost (this process stalled past it)')
    void session.end('lease_expired')
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
    // Past the grace period a session opened here would be cut at once: refused, its key stays good elsewhere.
    if (this.#closed) return { ok: false, reason: 'shutting_down' }
    const started = await startSessionWithKey(this.#deps.db, {
      key,
      // Draining: only a call admitted before (its slot held since the voice hook) may still connect.
      onlyHeldSlot: this.#draining,
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
    // Its key was taken while shutdown ended the live sessions: it ends the same way.
    if (this.#closed) void session.end('shutdown')
    return { ok: true, session }
  }

  /** Stops new sessions at once (readiness turns 503); live ones go on. Idempotent. */
  drain(): void {
    this.#draining = true
  }

  /**
   * Stops new sessions, lets live ones go on for up to `graceMs` (until each ends on its own; a carrier call
   * admitted before the drain may still connect meanwhile), then refuses every key and ends the rest with
   * `shutdown`; waits for their `session.end` webhooks up to `webhookDrainMs` more, and stops the
   * lease heartbeat. So it returns within `graceMs + webhookDrainMs` plus a database round trip or two.
   */
  async shutdown(graceMs: number, webhookDrainMs = SHUTDOWN_WEBHOOK_DRAIN_MS): Promise<void> {
    this.drain()
    const seen = new Set(this.live.values())
    if (graceMs > 0 && this.live.size > 0) {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        this.#allEnded(seen),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, graceMs)
        }),
      ])
      clearTimeout(timer)
    }
    this.#closed = true
    // Carrier calls admitted before the drain may have connected during it.
    for (const s of this.live.values()) seen.add(s)
    await Promise.all([...this.live.values()].map((s) => s.end('shutdown')))
    const deadline = Date.now() + webhookDrainMs
    await Promise.all([...seen].map((s) => s.drainWebhooks(Math.max(0, deadline - Date.now()))))
    for (const s of seen) s.stopTranscriptRetries()
    this.keeper.stop()
    this.#unsubscribe()
  }

  /** Resolves when every live session has ended, those that start meanwhile included. */
  async #allEnded(seen: Set<CallSession>): Promise<void> {
    while (this.live.size > 0) {
      const now = [...this.live.values()]
      for (const s of now) seen.add(s)
      await Promise.all(now.map((s) => s.ended))
    }
  }

  /** Sends session.end for a session the sweeper ended (its own process died before it could). */
  #notifySwept(row: SessionRow): Promise<void> {
    return sendDetachedSessionEnd(this.#deps, row)
  }
}
