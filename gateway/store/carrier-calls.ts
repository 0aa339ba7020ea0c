/**
 * Carrier call details on the session row: finding a session by its call sid, recording the sid of a call
 * voxgate placed, and moving the call status forward. Its state (status, key, lease, end) is session-states.ts's.
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

/** Records the sid and first status the carrier gave an outbound call it accepted. */
export async function setCallSid(db: Kysely<Database>, sessionId: string, callSid: string, callStatus: string): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ call_sid: callSid, call_status: callStatus, updated_at: sql<Date>`now()` })
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
