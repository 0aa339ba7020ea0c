/**
 * Carrier call state on the session row: finding a session by its call sid, re-keying a call that is still
 * waiting for its media stream, moving the call status forward, and ending a call that never connected.
 */
import { sql, type Kysely } from 'kysely'
import type { Database, SessionRow } from './schema.js'
import { hashToken, newSecret } from '../../core/ids.js'
import type { EndReason } from '../../core/end-reason.js'
import { SESSION_KEY_TTL_MS } from './sessions.js'

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
 * Gives a carrier session that is still waiting for its media stream (an outbound call now answered, or a
 * voice hook the carrier repeated) a new one-time key, and moves its concurrency lease to `leaseOwner`.
 * The slot it already holds is kept, so it is never counted twice. Undefined when the session is no longer
 * waiting (ended, connected, or its lease lapsed).
 */
export async function rekeyWaitingSession(
  db: Kysely<Database>,
  input: {
    sessionId: string
    leaseOwner: string
    leaseTtlMs: number
    callStatus?: string | undefined
    fromPhoneCountry?: string | undefined
    toPhoneCountry?: string | undefined
  },
): Promise<{ key: string; expiresAt: Date } | undefined> {
  const key = newSecret('csk')
  const expiresAt = new Date(Date.now() + SESSION_KEY_TTL_MS)
  const row = await db
    .updateTable('sessions')
    .set({
      key_hash: hashToken(key),
      key_expires_at: expiresAt,
      lease_owner: input.leaseOwner,
      lease_expires_at: sql<Date>`now() + ${`${input.leaseTtlMs} milliseconds`}::interval`,
      ...(input.callStatus !== undefined && { call_status: input.callStatus }),
      ...(input.fromPhoneCountry !== undefined && {
        from_phone_country: sql<string>`coalesce(from_phone_country, ${input.fromPhoneCountry})`,
      }),
      ...(input.toPhoneCountry !== undefined && { to_phone_country: sql<string>`coalesce(to_phone_country, ${input.toPhoneCountry})` }),
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', input.sessionId)
    .where('status', '=', 'authorized')
    .where('key_used_at', 'is', null)
    .where('lease_expires_at', '>', sql<Date>`now()`)
    .returning('id')
    .executeTakeFirst()
  return row === undefined ? undefined : { key, expiresAt }
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
    .set({
      status: 'ended',
      ended_at: sql<Date>`now()`,
      end_reason: end.endReason,
      ...(end.callStatus !== undefined && { call_status: end.callStatus }),
      lease_expires_at: null,
      charged: true,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', sessionId)
    .where('status', '=', 'authorized')
    .returningAll()
    .executeTakeFirst()
}
