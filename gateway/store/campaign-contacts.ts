/**
 * A campaign's contacts: added in batches, listed, and moved by the dialers. A dialer claims due contacts with
 * `FOR UPDATE SKIP LOCKED` under a lock of its campaign's row (so the campaign's concurrency holds across
 * replicas), and each contact's state follows the sessions placed for it (`sessions.campaign_contact_id`).
 */
import { sql, type Kysely } from 'kysely'
import { newId } from '../../core/ids.js'
import { voxError } from '../../core/errors.js'
import type { AttemptOutcome, CampaignAttemptRow, CampaignContactRow, ContactStatus } from './campaign-schema.js'
import type { Database } from './schema.js'

/** Most contacts one campaign holds. */
export const MAX_CONTACTS_PER_CAMPAIGN = 100_000
/** Rows written per insert statement (well under Postgres' 65,535 parameters). */
const CHUNK = 1000

/** One contact to add, already checked. */
export interface NewContact {
  /** Its row in the uploaded batch (1-based), for the report. */
  row: number
  phoneNumber: string
  timezone: string
  customMetadata: Record<string, unknown> | undefined
}

/**
 * Adds `contacts` (no number twice among them) to the campaign; a number already in it is skipped and its row returned as a duplicate. The
 * campaign's row is locked meanwhile, so concurrent uploads never pass the cap together; a batch that would
 * pass it is refused whole (`campaign_full`).
 */
export async function addContacts(
  db: Kysely<Database>,
  campaign: { id: string; organizationId: string },
  contacts: readonly NewContact[],
): Promise<{ added: number; duplicateRows: number[] }> {
  return db.transaction().execute(async (tx) => {
    await tx.selectFrom('campaigns').select('id').where('id', '=', campaign.id).forUpdate().executeTakeFirstOrThrow()
    const held = await tx
      .selectFrom('campaign_contacts')
      .select([sql<string>`count(*)`.as('n'), sql<number | null>`max(row_number)`.as('last')])
      .where('campaign_id', '=', campaign.id)
      .executeTakeFirstOrThrow()
    if (Number(held.n) + contacts.length > MAX_CONTACTS_PER_CAMPAIGN) {
      throw voxError(
        'campaign_full',
        `the campaign holds ${held.n} contacts; adding ${contacts.length} would pass ${MAX_CONTACTS_PER_CAMPAIGN}`,
      )
    }
    let next = (held.last ?? 0) + 1
    let added = 0
    const duplicateRows: number[] = []
    for (let i = 0; i < contacts.length; i += CHUNK) {
      const chunk = contacts.slice(i, i + CHUNK)
      const rows = chunk.map((c) => ({
        id: newId('cct'),
        campaign_id: campaign.id,
        organization_id: campaign.organizationId,
        row_number: next++,
        phone_number: c.phoneNumber,
        timezone: c.timezone,
        custom_metadata: c.customMetadata === undefined ? null : JSON.stringify(c.customMetadata),
        status: 'pending' as const,
      }))
      const inserted = await tx
        .insertInto('campaign_contacts')
        .values(rows)
        .onConflict((oc) => oc.columns(['campaign_id', 'phone_number']).doNothing())
        .returning('phone_number')
        .execute()
      added += inserted.length
      if (inserted.length < chunk.length) {
        const kept = new Set(inserted.map((r) => r.phone_number))
        for (const c of chunk) if (!kept.has(c.phoneNumber)) duplicateRows.push(c.row)
      }
    }
    return { added, duplicateRows }
  })
}

/** A page of the campaign's contacts in upload order, after row `afterRow`. */
export async function listContacts(
  db: Kysely<Database>,
  campaignId: string,
  page: { afterRow: number; limit: number; status?: ContactStatus | undefined },
): Promise<CampaignContactRow[]> {
  let q = db.selectFrom('campaign_contacts').selectAll().where('campaign_id', '=', campaignId).where('row_number', '>', page.afterRow)
  if (page.status !== undefined) q = q.where('status', '=', page.status)
  return q.orderBy('row_number').limit(page.limit).execute()
}

/** The attempts of `contactIds`, in order. */
export async function contactAttempts(db: Kysely<Database>, contactIds: readonly string[]): Promise<CampaignAttemptRow[]> {
  if (contactIds.length === 0) return []
  return db
    .selectFrom('campaign_attempts')
    .selectAll()
    .where('contact_id', 'in', [...contactIds])
    .orderBy('contact_id')
    .orderBy('attempt')
    .execute()
}

/**
 * Claims up to the campaign's free concurrency of due contacts whose window is open at `now` in their own zone.
 * Takes the campaign's row with SKIP LOCKED: while another replica claims for it, this one claims nothing.
 */
export async function claimContacts(
  db: Kysely<Database>,
  input: { campaignId: string; owner: string; claimTtlMs: number; now: Date; limit: number },
): Promise<CampaignContactRow[]> {
  return db.transaction().execute(async (tx) => {
    const campaign = await tx
      .selectFrom('campaigns')
      .select(['max_concurrency', 'window_days', 'window_start_minute', 'window_end_minute'])
      .where('id', '=', input.campaignId)
      .where('status', '=', 'running')
      .forUpdate()
      .skipLocked()
      .executeTakeFirst()
    if (campaign === undefined) return []
    // On a line: claimed, and no session of it has ended yet (one that ended frees its line before it is settled).
    const busy = await sql<{ n: string }>`
      select count(*) as n from campaign_contacts c
      where c.campaign_id = ${input.campaignId} and c.status = 'dialing'
        and not exists (
          select 1 from sessions s where s.campaign_contact_id = c.id and s.status = 'ended'
            and not exists (select 1 from campaign_attempts a where a.session_id = s.id)
        )`.execute(tx)
    const free = Math.min(input.limit, campaign.max_concurrency - Number(busy.rows[0]?.n ?? 0))
    if (free <= 0) return []
    const local = sql`(${input.now.toISOString()}::timestamptz at time zone c.timezone)`
    const claimed = await sql<CampaignContactRow>`
      with due as (
        select c.id from campaign_contacts c
        where c.campaign_id = ${input.campaignId} and c.status = 'pending' and c.next_attempt_at <= now()
          and extract(isodow from ${local})::int = any(${campaign.window_days}::int[])
          and extract(hour from ${local})::int * 60 + extract(minute from ${local})::int >= ${campaign.window_start_minute}
          and extract(hour from ${local})::int * 60 + extract(minute from ${local})::int < ${campaign.window_end_minute}
        order by c.next_attempt_at, c.row_number
        limit ${free}
        for update skip locked
      )
      update campaign_contacts set status = 'dialing', claim_owner = ${input.owner},
        claim_expires_at = now() + ${`${input.claimTtlMs} milliseconds`}::interval, updated_at = now()
      from due where campaign_contacts.id = due.id
      returning campaign_contacts.*`.execute(tx)
    return claimed.rows
  })
}

/** Keeps this dialer's claims alive (a claim only matters until a session is placed for it). */
export async function renewClaims(db: Kysely<Database>, owner: string, claimTtlMs: number): Promise<void> {
  await db
    .updateTable('campaign_contacts')
    .set({ claim_expires_at: sql<Date>`now() + ${`${claimTtlMs} milliseconds`}::interval` })
    .where('claim_owner', '=', owner)
    .where('status', '=', 'dialing')
    .where('claim_expires_at', '>', sql<Date>`now()`)
    .execute()
}

/**
 * Puts a claimed contact back in line, due after `delayMs`, unless a session placed for it is not yet settled
 * (that session decides what follows). `outcome` says why, when something did. A contact of a campaign canceled
 * meanwhile ends `canceled` instead.
 */
export async function releaseContact(
  db: Kysely<Database>,
  contactId: string,
  delayMs: number,
  outcome?: AttemptOutcome | undefined,
): Promise<void> {
  await sql`
    update campaign_contacts c set claim_owner = null, claim_expires_at = null, updated_at = now(),
      status = case when k.status = 'canceled' then 'done' else 'pending' end,
      disposition = case when k.status = 'canceled' then 'canceled' else c.disposition end,
      next_attempt_at = now() + ${`${delayMs} milliseconds`}::interval, last_outcome = coalesce(${outcome ?? null}, c.last_outcome)
    from campaigns k
    where c.id = ${contactId} and c.status = 'dialing' and k.id = c.campaign_id
      and not exists (
        select 1 from sessions s where s.campaign_contact_id = c.id
          and not exists (select 1 from campaign_attempts a where a.session_id = s.id)
      )`.execute(db)
}

/** Ends a claimed contact without a call (its number is on the do-not-call list), as `disposition`. */
export async function finishWithoutCall(db: Kysely<Database>, contactId: string, disposition: AttemptOutcome): Promise<void> {
  await db
    .updateTable('campaign_contacts')
    .set({
      status: 'done',
      disposition,
      last_outcome: disposition,
      claim_owner: null,
      claim_expires_at: null,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', contactId)
    .where('status', '!=', 'done')
    .execute()
}

/** Ends every contact of a canceled campaign that is not on a call (`canceled`). */
export async function cancelPendingContacts(db: Kysely<Database>, campaignId: string): Promise<void> {
  await db
    .updateTable('campaign_contacts')
    .set({ status: 'done', disposition: 'canceled', updated_at: sql<Date>`now()` })
    .where('campaign_id', '=', campaignId)
    .where('status', '=', 'pending')
    .execute()
}

/**
 * Puts back in line the claimed contacts whose claim expired (their dialer died or stalled) and that have no
 * session not yet settled: a contact with a session still live, or ended but not yet counted, stays claimed.
 */
export async function reclaimAbandoned(db: Kysely<Database>): Promise<number> {
  const r = await sql`
    update campaign_contacts c set status = 'pending', claim_owner = null, claim_expires_at = null, updated_at = now()
    where c.status = 'dialing' and c.claim_expires_at < now()
      and not exists (
        select 1 from sessions s where s.campaign_contact_id = c.id
          and not exists (select 1 from campaign_attempts a where a.session_id = s.id)
      )`.execute(db)
  return Number(r.numAffectedRows ?? 0n)
}
