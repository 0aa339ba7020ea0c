/** Campaigns of an organization: created, read, counted, and moved through their states. */
import { sql, type Kysely } from 'kysely'
import { newId } from '../../core/ids.js'
import type { CampaignRow, CampaignStatus, RetryPolicy } from './campaign-schema.js'
import type { Database } from './schema.js'

/** What creating a campaign stores. */
export interface NewCampaign {
  organizationId: string
  agentId: string
  name: string
  fromPhoneNumber: string
  windowDays: number[]
  windowStartMinute: number
  windowEndMinute: number
  defaultTimezone: string
  retry: RetryPolicy
  maxConcurrency: number
  machineDetection: boolean
  lifecycleWebhooks: boolean
}

/** Stores a new campaign as a draft. */
export async function createCampaign(db: Kysely<Database>, c: NewCampaign): Promise<CampaignRow> {
  return db
    .insertInto('campaigns')
    .values({
      id: newId('cmp'),
      organization_id: c.organizationId,
      agent_id: c.agentId,
      name: c.name,
      from_phone_number: c.fromPhoneNumber,
      status: 'draft',
      window_days: c.windowDays,
      window_start_minute: c.windowStartMinute,
      window_end_minute: c.windowEndMinute,
      default_timezone: c.defaultTimezone,
      retry: JSON.stringify(c.retry),
      max_concurrency: c.maxConcurrency,
      machine_detection: c.machineDetection,
      lifecycle_webhooks: c.lifecycleWebhooks,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** One campaign of the organization. */
export async function getCampaign(db: Kysely<Database>, organizationId: string, id: string): Promise<CampaignRow | undefined> {
  return db.selectFrom('campaigns').selectAll().where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst()
}

/** The organization's campaigns, newest first. */
export async function listCampaigns(db: Kysely<Database>, organizationId: string, limit: number): Promise<CampaignRow[]> {
  return db
    .selectFrom('campaigns')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute()
}

/** Every running campaign (the dialers' work), oldest first. */
export async function runningCampaigns(db: Kysely<Database>, limit: number): Promise<CampaignRow[]> {
  return db.selectFrom('campaigns').selectAll().where('status', '=', 'running').orderBy('created_at').limit(limit).execute()
}

/**
 * Moves a campaign from one of `from` to `to`; undefined when it is in none of them (someone else moved it
 * first, or it may not move so). Only one caller wins a move, so only one sends its webhook.
 */
export async function moveCampaign(
  db: Kysely<Database>,
  organizationId: string,
  id: string,
  from: readonly CampaignStatus[],
  to: CampaignStatus,
): Promise<CampaignRow | undefined> {
  return db
    .updateTable('campaigns')
    .set({
      status: to,
      updated_at: sql<Date>`now()`,
      ...(to === 'running' && { started_at: sql<Date>`coalesce(started_at, now())` }),
      ...((to === 'completed' || to === 'canceled') && { ended_at: sql<Date>`now()` }),
    })
    .where('id', '=', id)
    .where('organization_id', '=', organizationId)
    .where('status', 'in', [...from])
    .returningAll()
    .executeTakeFirst()
}

/** A campaign's contacts by state and final disposition, and its attempts so far. */
export interface CampaignCounts {
  total: number
  /** Contacts dialled at least once. */
  dialled: number
  pending: number
  dialing: number
  done: number
  attempts: number
  dispositions: Record<string, number>
  outcomes: Record<string, number>
}

/** Counts the campaign's contacts and attempts. */
export async function campaignCounts(db: Kysely<Database>, campaignId: string): Promise<CampaignCounts> {
  const [contacts, attempts] = await Promise.all([
    db
      .selectFrom('campaign_contacts')
      .select(['status', 'disposition', sql<string>`count(*)`.as('n'), sql<string>`count(*) filter (where attempts > 0)`.as('dialled')])
      .where('campaign_id', '=', campaignId)
      .groupBy(['status', 'disposition'])
      .execute(),
    db
      .selectFrom('campaign_attempts')
      .select(['outcome', sql<string>`count(*)`.as('n')])
      .where('campaign_id', '=', campaignId)
      .groupBy('outcome')
      .execute(),
  ])
  const counts: CampaignCounts = { total: 0, dialled: 0, pending: 0, dialing: 0, done: 0, attempts: 0, dispositions: {}, outcomes: {} }
  for (const r of contacts) {
    const n = Number(r.n)
    counts.total += n
    counts.dialled += Number(r.dialled)
    counts[r.status] += n
    if (r.disposition !== null) counts.dispositions[r.disposition] = (counts.dispositions[r.disposition] ?? 0) + n
  }
  for (const r of attempts) {
    counts.outcomes[r.outcome] = Number(r.n)
    counts.attempts += Number(r.n)
  }
  return counts
}

/**
 * Completes a running campaign with no contact left to call or on a call; undefined when it still has some
 * (or is not running). The check and the move are one statement, so two replicas never both complete it.
 */
export async function completeIfFinished(db: Kysely<Database>, campaignId: string): Promise<CampaignRow | undefined> {
  return db
    .updateTable('campaigns')
    .set({ status: 'completed', ended_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('id', '=', campaignId)
    .where('status', '=', 'running')
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('campaign_contacts').select('id').where('campaign_id', '=', campaignId).where('status', '!=', 'done'))),
    )
    .returningAll()
    .executeTakeFirst()
}

/** The time zones the database knows among `zones` (the dialer's window test runs in SQL, with its zone names). */
export async function databaseTimeZones(db: Kysely<Database>, zones: readonly string[]): Promise<Set<string>> {
  if (zones.length === 0) return new Set()
  const rows = await sql<{ name: string }>`select name from pg_timezone_names where name = any(${[...zones]}::text[])`.execute(db)
  return new Set(rows.rows.map((r) => r.name))
}

/** Up to `limit` distinct time zones of the campaign's contacts still to call (the next window opens in one of them). */
export async function pendingTimeZones(db: Kysely<Database>, campaignId: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('campaign_contacts')
    .select('timezone')
    .distinct()
    .where('campaign_id', '=', campaignId)
    .where('status', '=', 'pending')
    .limit(limit)
    .execute()
  return rows.map((r) => r.timezone)
}
