import { sql, type Kysely } from 'kysely'
import type { Database, OrganizationRow } from './schema.js'
import type { CarrierCredentials } from '../../core/carrier-credentials.js'
import { newId } from '../../core/ids.js'
import { createApiKey } from './api-keys.js'
import { effectiveLimits, limitsStorage, type LimitsPatch, type OrganizationLimits } from './organization-limits.js'

/** An organization as the API shows it (no carrier secret). */
export interface Organization {
  id: string
  name: string
  balance: number | null
  max_concurrent_sessions: number | null
  recording_enabled: boolean
  carrier_configured: boolean
  /** Outbound calls per second the carrier account allows (an addition; default 1, the carrier's own default). */
  outbound_calls_per_second: number
  /** Request rates and caps on volume (an addition), each the operator's override or the default. */
  limits: OrganizationLimits
}

/** Fields an operator can set on an organization. */
export interface OrganizationFields {
  name?: string
  balance?: number | null
  max_concurrent_sessions?: number | null
  recording_enabled?: boolean
  /** null: back to the default. */
  outbound_calls_per_second?: number | null
  /** Merged into the stored overrides: omitted keeps, null goes back to the default. */
  limits?: LimitsPatch
}

/** Outbound calls per second of an organization that set none: the Twilio-compatible carrier's account default. */
export const DEFAULT_OUTBOUND_CALLS_PER_SECOND = 1

/** Default concurrent-session limit of a new organization (operators change it; null is unlimited). */
export const DEFAULT_MAX_CONCURRENT_SESSIONS = 50

/** Maps a row to the API shape, converting numeric and hiding secrets. */
export function toOrganization(row: OrganizationRow): Organization {
  return {
    id: row.id,
    name: row.name,
    balance: row.balance === null ? null : Number(row.balance),
    max_concurrent_sessions: row.max_concurrent_sessions,
    recording_enabled: row.recording_enabled,
    carrier_configured: row.carrier_account_sid !== null && row.carrier_auth_token !== null,
    outbound_calls_per_second: row.outbound_calls_per_second ?? DEFAULT_OUTBOUND_CALLS_PER_SECOND,
    limits: effectiveLimits(row.limits),
  }
}

/** Creates an organization and its first API key; the plain key is returned once and never stored. */
export async function createOrganization(
  db: Kysely<Database>,
  fields: OrganizationFields & { name: string },
): Promise<{ organization: Organization; apiKey: string }> {
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .insertInto('organizations')
      .values({
        id: newId('org'),
        name: fields.name,
        balance: fields.balance ?? null,
        max_concurrent_sessions:
          fields.max_concurrent_sessions === undefined ? DEFAULT_MAX_CONCURRENT_SESSIONS : fields.max_concurrent_sessions,
        recording_enabled: fields.recording_enabled ?? false,
        carrier_account_sid: null,
        carrier_auth_token: null,
        carrier_api_base_url: null,
        outbound_calls_per_second: fields.outbound_calls_per_second ?? null,
        limits: JSON.stringify(overridesOnly(limitsStorage(fields.limits ?? {}))),
        updated_at: new Date(),
      })
      .returningAll()
      .executeTakeFirstOrThrow()
    const apiKey = await createApiKey(tx, row.id)
    return { organization: toOrganization(row), apiKey }
  })
}

/** Reads one organization row, or undefined. */
export async function getOrganizationRow(db: Kysely<Database>, id: string): Promise<OrganizationRow | undefined> {
  return db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst()
}

/** Every organization, by name (the console's admin sign-in lists them; deployments hold few). */
export async function listOrganizations(db: Kysely<Database>, limit = 1000): Promise<Organization[]> {
  const rows = await db.selectFrom('organizations').selectAll().orderBy('name').orderBy('id').limit(limit).execute()
  return rows.map(toOrganization)
}

function overridesOnly(storage: Record<string, number | null>): Record<string, number> {
  return Object.fromEntries(Object.entries(storage).filter((e): e is [string, number] => e[1] !== null))
}

/** Updates the given fields; undefined when no such organization. */
export async function updateOrganization(db: Kysely<Database>, id: string, fields: OrganizationFields): Promise<Organization | undefined> {
  const { limits, ...plain } = fields
  // Merged in the statement (nulls drop the override), so two PATCHes of different limits both stick.
  const mergedLimits =
    limits === undefined ? {} : { limits: sql<string>`jsonb_strip_nulls(limits || ${JSON.stringify(limitsStorage(limits))}::jsonb)` }
  const row = await db
    .updateTable('organizations')
    .set({ ...plain, ...mergedLimits, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
  return row && toOrganization(row)
}

/** Stores carrier credentials; returns false when no such organization. */
export async function setCarrierCredentials(db: Kysely<Database>, id: string, creds: CarrierCredentials): Promise<boolean> {
  const res = await db
    .updateTable('organizations')
    .set({
      carrier_account_sid: creds.accountSid,
      carrier_auth_token: creds.authToken,
      carrier_api_base_url: creds.apiBaseUrl ?? null,
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .executeTakeFirst()
  return Number(res.numUpdatedRows) > 0
}

/** The organization's carrier credentials, or undefined when none are stored (no base URL: the carrier's default). */
export function carrierCredentials(row: OrganizationRow): CarrierCredentials | undefined {
  if (row.carrier_account_sid === null || row.carrier_auth_token === null) return undefined
  return { accountSid: row.carrier_account_sid, authToken: row.carrier_auth_token, apiBaseUrl: row.carrier_api_base_url ?? undefined }
}

/** The carrier credentials an organization stored, or undefined (no such organization, or none stored). */
export async function getCarrierCredentials(db: Kysely<Database>, organizationId: string): Promise<CarrierCredentials | undefined> {
  const row = await getOrganizationRow(db, organizationId)
  return row && carrierCredentials(row)
}

/** Number of organizations (first start creates a default one when this is zero). */
export async function countOrganizations(db: Kysely<Database>): Promise<number> {
  const r = await db
    .selectFrom('organizations')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(r.n)
}

/** The balance rule: an organization with a balance (not unlimited) of zero or less may not start sessions (402). */
export function balanceUsedUp(org: { balance: string | number | null }): boolean {
  return org.balance !== null && Number(org.balance) <= 0
}
