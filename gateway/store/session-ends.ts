/**
 * Ending a session row, written once: every end (a hangup, a call that never connected, a lease that lapsed, a
 * key replaced or revoked before use) goes through `endedRow`: status `ended`, the end time and reason, the
 * duration, the lease released and usage settled. The key side of the row's state machine is session-keys.ts.
 */
import { sql, type Kysely } from 'kysely'
import type { Database, SessionRow } from './schema.js'
import type { EndReason } from '../../core/end-reason.js'
import { chargeUsage } from './usage.js'

/**
 * When an ended row is dated: now, at its lease's expiry (the last moment a live process vouched for it), or
 * not at all: a key replaced before it was used began nothing, and has always shown `ended_at` null.
 */
type EndTime = 'now' | 'lease_expiry' | 'undated'

/**
 * The rule for ending a row, written once: status `ended`, its end time and reason, the connected duration
 * (null when it never started), the concurrency lease released, and `charged` set (a caller that charges
 * usage does it in the same transaction, so a row is charged at most once).
 */
export function endedRow(reason: EndReason, time: EndTime) {
  const endedAt = time === 'now' ? sql<Date>`now()` : time === 'lease_expiry' ? sql<Date>`lease_expires_at` : null
  return {
    status: 'ended' as const,
    ended_at: endedAt,
    duration_ms:
      endedAt === null
        ? null
        : sql<number>`case when started_at is null then null else greatest(0, floor(extract(epoch from (${endedAt} - started_at)) * 1000))::int end`,
    end_reason: reason,
    lease_expires_at: null,
    charged: true,
    updated_at: sql<Date>`now()`,
  }
}

/** Fields persisted when a session ends. */
export interface SessionEnd {
  endReason: EndReason
  transcriptionDurationSeconds: number | null
  ttsDurationSeconds: number | null
  latencyMs: number | null
  callStatus?: string | null
  /** The transfer target, when the session ends `transferred`. */
  transferredTo?: string | undefined
}

/**
 * Ends a session once: sets the end fields, releases its lease and charges usage from the organization's
 * balance (at `ratePerMinute` per connected minute). Returns the final row, or undefined if already ended.
 */
export async function endSession(
  db: Kysely<Database>,
  sessionId: string,
  end: SessionEnd,
  ratePerMinute: number,
): Promise<SessionRow | undefined> {
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable('sessions')
      .set({
        ...endedRow(end.endReason, 'now'),
        transcription_duration_seconds: end.transcriptionDurationSeconds,
        tts_duration_seconds: end.ttsDurationSeconds,
        latency_ms: end.latencyMs,
        ...(end.callStatus !== undefined && { call_status: end.callStatus }),
        ...(end.transferredTo !== undefined && { transferred_to: end.transferredTo }),
      })
      .where('id', '=', sessionId)
      .where('status', '!=', 'ended')
      .returningAll()
      .executeTakeFirst()
    if (row === undefined) return undefined
    await chargeUsage(tx, row, ratePerMinute)
    return row
  })
}

/**
 * Ends a carrier session that never connected its media stream (busy, no answer, carrier error, stream never
 * opened): releases its concurrency slot and records why. Nothing was connected, so nothing is charged.
 * Undefined when the session had already connected or ended.
 */
export async function endWaitingSession(
  db: Kysely<Database>,
  sessionId: string,
  end: { endReason: EndReason; callStatus?: string | undefined },
): Promise<SessionRow | undefined> {
  return db
    .updateTable('sessions')
    .set({ ...endedRow(end.endReason, 'now'), ...(end.callStatus !== undefined && { call_status: end.callStatus }) })
    .where('id', '=', sessionId)
    .where('status', '=', 'authorized')
    .returningAll()
    .executeTakeFirst()
}

/**
 * Ends sessions whose lease expired (their process died): they never stay `connected` forever. The end time
 * is the lease expiry, the last moment a live process vouched for the call. Returns the rows it ended.
 */
export async function sweepExpiredSessions(db: Kysely<Database>, ratePerMinute: number): Promise<SessionRow[]> {
  return db.transaction().execute(async (tx) => {
    const ended = await tx
      .updateTable('sessions')
      .set(endedRow('lease_expired', 'lease_expiry'))
      .where('status', '!=', 'ended')
      .where('lease_expires_at', '<=', sql<Date>`now()`)
      .returningAll()
      .execute()
    for (const row of ended) await chargeUsage(tx, row, ratePerMinute)
    return ended
  })
}
