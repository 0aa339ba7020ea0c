/**
 * Carrier call details on the session row: finding a session by its call sid, recording the sid of a call
 * voxgate placed, and moving the call status forward. Its state (status, key, lease, end) is written by
 * session-keys.ts and session-ends.ts.
 */
import { sql, type Kysely } from 'kysely'
import type { FinalCallStatus } from '../../core/call-status.js'
import type { Database, SessionRow } from './schema.js'

/** The newest carrier session of a call sid, or undefined. */
export async function findSessionByCallSid(db: Kysely<Database>, callSid: string): Promise<SessionRow | undefined> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('channel', '=', 'carrier')
    .where('call_sid', '=', callSid)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst()
}

/** Records the sid and first status the carrier gave an outbound call it accepted, and when it was dialled. */
export async function setCallSid(
  db: Kysely<Database>,
  sessionId: string,
  callSid: string,
  callStatus: string,
  dialedAt: Date,
): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ call_sid: callSid, call_status: callStatus, dialed_at: dialedAt, updated_at: sql<Date>`now()` })
    .where('id', '=', sessionId)
    .execute()
}

/**
 * Moves a call's stored status with `next` (which never goes backwards) under a row lock, so callbacks
 * arriving together cannot overwrite each other. Returns the row after the update, or undefined.
 */
export async function advanceCallStatus<S extends string>(
  db: Kysely<Database>,
  sessionId: string,
  next: (current: S | undefined) => S,
): Promise<{ row: SessionRow; previous: S | undefined } | undefined> {
  return db.transaction().execute(async (tx) => {
    const current = await tx.selectFrom('sessions').select('call_status').where('id', '=', sessionId).forUpdate().executeTakeFirst()
    if (current === undefined) return undefined
    const previous = (current.call_status ?? undefined) as S | undefined
    const status = next(previous)
    const row = await tx
      .updateTable('sessions')
      .set({ call_status: status, updated_at: sql<Date>`now()` })
      .where('id', '=', sessionId)
      .returningAll()
      .executeTakeFirstOrThrow()
    return { row, previous }
  })
}

/** Final call statuses (core/call-status.ts), as stored. */
const FINAL_CALL_STATUSES = ['completed', 'busy', 'no-answer', 'canceled', 'failed'] as const satisfies readonly FinalCallStatus[]

/** Of `sessionIds`, the connected carrier sessions whose stored call status is final (the carrier ended the call). */
export async function connectedCallsWithFinalStatus(db: Kysely<Database>, sessionIds: readonly string[]): Promise<string[]> {
  if (sessionIds.length === 0) return []
  const rows = await db
    .selectFrom('sessions')
    .select('id')
    .where('id', 'in', sessionIds)
    .where('status', '=', 'connected')
    .where('call_status', 'in', FINAL_CALL_STATUSES)
    .execute()
  return rows.map((r) => r.id)
}

/** Marks an outbound call as one with answering machine detection (before it is dialled). */
export async function setMachineDetection(db: Kysely<Database>, sessionId: string): Promise<void> {
  await db.updateTable('sessions').set({ machine_detection: true, updated_at: sql<Date>`now()` }).where('id', '=', sessionId).execute()
}

/**
 * Stores a machine detection verdict unless a final one is there: the first verdict stands, except that `machine`
 * (or `unknown`) moves on to `machine_beep` when the beep is heard. The row after the update, or undefined when
 * nothing changed (no detection asked, or the verdict was already known).
 */
export async function storeAnsweredBy(db: Kysely<Database>, sessionId: string, verdict: string): Promise<SessionRow | undefined> {
  return db
    .updateTable('sessions')
    .set({ answered_by: verdict, updated_at: sql<Date>`now()` })
    .where('id', '=', sessionId)
    .where('machine_detection', '=', true)
    .where((eb) =>
      verdict === 'machine_beep'
        ? eb.or([eb('answered_by', 'is', null), eb('answered_by', 'in', ['machine', 'unknown'])])
        : eb('answered_by', 'is', null),
    )
    .returningAll()
    .executeTakeFirst()
}
