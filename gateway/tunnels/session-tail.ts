import type { Kysely } from 'kysely'
import type { Database } from '../store/schema.js'
import type { Log } from '../../core/log.js'
import type { GatewayMessage } from './tunnel-codec.js'

/** How often `--tail` looks for started and ended sessions of the agent. */
const TAIL_POLL_MS = 1_000

/**
 * `voxgate tunnel --tail`: the agent's sessions as they start and end, read from the sessions table (they may run
 * on any replica, so the table is where all of them show). Turns and webhook exchanges the CLI sees itself.
 */
export class SessionTail {
  readonly #seen = new Map<string, 'started' | 'ended'>()
  /** The last failed turn reported (transcript entry id). */
  #lastFailureId = 0
  #timer: NodeJS.Timeout | undefined
  #busy = false

  constructor(
    readonly db: Kysely<Database>,
    readonly agentId: string,
    readonly since: Date,
    readonly send: (m: GatewayMessage) => void,
    readonly log: Log,
  ) {}

  start(): void {
    this.#timer = setInterval(() => void this.#poll(), TAIL_POLL_MS)
    this.#timer.unref()
  }

  stop(): void {
    clearInterval(this.#timer)
  }

  /** Turns of the agent's sessions that failed (stored with a cause), each reported once. */
  async #pollFailures(): Promise<void> {
    const rows = await this.db
      .selectFrom('transcript_entries as t')
      .innerJoin('sessions as s', 's.id', 't.session_id')
      .select(['t.id', 't.session_id', 't.turn_id', 't.timestamp', 't.failure'])
      .where('s.agent_id', '=', this.agentId)
      .where('s.created_at', '>=', this.since)
      .where('t.failure', 'is not', null)
      .where('t.id', '>', this.#lastFailureId)
      .orderBy('t.id')
      .limit(200)
      .execute()
    for (const r of rows) {
      this.#lastFailureId = r.id
      if (r.failure === null) continue
      this.send({
        type: 'tail',
        event: 'turn.failed',
        session_id: r.session_id,
        at: r.timestamp.toISOString(),
        detail: { turn_id: r.turn_id, cause: r.failure.cause, waited_ms: r.failure.waited_ms, heard: r.failure.heard },
      })
    }
  }

  async #poll(): Promise<void> {
    if (this.#busy) return
    this.#busy = true
    try {
      const rows = await this.db
        .selectFrom('sessions')
        .select(['id', 'status', 'channel', 'started_at', 'ended_at', 'end_reason', 'from_phone_number', 'duration_ms'])
        .where('agent_id', '=', this.agentId)
        .where('created_at', '>=', this.since)
        .where('status', 'in', ['connected', 'ended'])
        .orderBy('created_at')
        .limit(200)
        .execute()
      for (const r of rows) {
        const before = this.#seen.get(r.id)
        if (before === undefined && r.started_at !== null) {
          this.#seen.set(r.id, 'started')
          this.send({
            type: 'tail',
            event: 'session.started',
            session_id: r.id,
            at: r.started_at.toISOString(),
            detail: { channel: r.channel, ...(r.from_phone_number !== null && { from: r.from_phone_number }) },
          })
        }
        if (r.status === 'ended' && this.#seen.get(r.id) !== 'ended') {
          this.#seen.set(r.id, 'ended')
          this.send({
            type: 'tail',
            event: 'session.ended',
            session_id: r.id,
            at: (r.ended_at ?? new Date()).toISOString(),
            detail: { end_reason: r.end_reason, duration_ms: r.duration_ms },
          })
        }
      }
      await this.#pollFailures()
    } catch (e) {
      this.log.debug({ err: e }, 'tunnel tail poll failed')
    } finally {
      this.#busy = false
    }
  }
}
