/**
 * Settling attempts: a session placed for a contact has ended, so its outcome is recorded (once, keyed by the
 * session) and the contact moves on: done, or back in line for a retry. Any replica may settle any session.
 */
import { sql, type Kysely } from 'kysely'
import type { AttemptOutcome } from './campaign-schema.js'
import type { Database } from './schema.js'

/** What follows an attempt: the contact is done with a disposition, or dialled again after a delay. */
export type NextStep = { readonly done: true; readonly disposition: AttemptOutcome } | { readonly done: false; readonly delayMs: number }

/** An ended session of a contact still marked on a call, not yet recorded as an attempt. */
export interface UnsettledSession {
  session_id: string
  contact_id: string
  campaign_id: string
  call_status: string | null
  end_reason: string | null
  answered_by: string | null
  call_sid: string | null
  started_at: Date | null
  created_at: Date
  ended_at: Date | null
}

/** Up to `limit` ended sessions waiting to be settled, oldest first. */
export async function unsettledSessions(db: Kysely<Database>, limit: number): Promise<UnsettledSession[]> {
  const r = await sql<UnsettledSession>`
    select s.id as session_id, c.id as contact_id, c.campaign_id, s.call_status, s.end_reason, s.answered_by, s.call_sid,
      s.started_at, s.created_at, s.ended_at
    from campaign_contacts c join sessions s on s.campaign_contact_id = c.id
    where c.status = 'dialing' and s.status = 'ended'
      and not exists (select 1 from campaign_attempts a where a.session_id = s.id)
    order by s.ended_at
    limit ${limit}`.execute(db)
  return r.rows
}

/** How the contact moves on after the attempt, given its attempts counting this one. */
export type AttemptStep = (outcome: AttemptOutcome, attempts: number) => NextStep

/**
 * Records the attempt and moves its contact, in one transaction holding the contact's row. False when another
 * replica settled this session first.
 */
export async function settleAttempt(
  db: Kysely<Database>,
  s: UnsettledSession,
  outcome: AttemptOutcome,
  step: AttemptStep,
): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const contact = await tx
      .selectFrom('campaign_contacts')
      .select(['attempts', 'status'])
      .where('id', '=', s.contact_id)
      .forUpdate()
      .executeTakeFirst()
    if (contact === undefined) return false
    const counted = outcome !== 'not_dialled' && outcome !== 'outside_window'
    const attempt = contact.attempts + (counted ? 1 : 0)
    const next = step(outcome, attempt)
    const inserted = await tx
      .insertInto('campaign_attempts')
      .values({
        session_id: s.session_id,
        contact_id: s.contact_id,
        campaign_id: s.campaign_id,
        attempt,
        outcome,
        call_status: s.call_status,
        end_reason: s.end_reason,
        answered_by: s.answered_by,
        started_at: s.created_at,
        ended_at: s.ended_at ?? new Date(),
      })
      .onConflict((oc) => oc.column('session_id').doNothing())
      .returning('session_id')
      .executeTakeFirst()
    if (inserted === undefined) return false
    if (contact.status !== 'dialing') return true
    await tx
      .updateTable('campaign_contacts')
      .set({
        attempts: attempt,
        last_outcome: outcome,
        claim_owner: null,
        claim_expires_at: null,
        updated_at: sql<Date>`now()`,
        ...(next.done
          ? { status: 'done' as const, disposition: next.disposition }
          : { status: 'pending' as const, next_attempt_at: sql<Date>`now() + ${`${next.delayMs} milliseconds`}::interval` }),
      })
      .where('id', '=', s.contact_id)
      .execute()
    return true
  })
}
