/**
 * Caps on what an organization keeps (agents, phone numbers, SIP trunks, agent links). The count and the insert run
 * in one transaction with the organization row locked, so two creations at once, on one replica or two, cannot
 * both pass the last free place.
 */
import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from './schema.js'
import { effectiveLimits, type CapName } from './organization-limits.js'

/** A creation refused: the organization has `max` of what `cap` counts already. */
export interface CapReached {
  readonly capReached: CapName
  readonly max: number
}

/** True for a refusal of {@link createWithinCap}. */
export function isCapReached(v: unknown): v is CapReached {
  return typeof v === 'object' && v !== null && 'capReached' in v
}

const n = sql<string>`count(*)`.as('n')

async function count(tx: Transaction<Database>, organizationId: string, cap: CapName, except: string | undefined): Promise<number> {
  let row: { n: string }
  switch (cap) {
    case 'max_agents':
      row = await tx.selectFrom('agents').select(n).where('organization_id', '=', organizationId).executeTakeFirstOrThrow()
      break
    case 'max_phone_numbers': {
      // A number the organization holds already is moved or relabelled, not added.
      let q = tx.selectFrom('phone_numbers').select(n).where('organization_id', '=', organizationId)
      if (except !== undefined) q = q.where('phone_number', '<>', except)
      row = await q.executeTakeFirstOrThrow()
      break
    }
    case 'max_sip_trunks':
      row = await tx.selectFrom('sip_trunks').select(n).where('organization_id', '=', organizationId).executeTakeFirstOrThrow()
      break
    case 'max_agent_links':
      row = await tx
        .selectFrom('agent_links')
        .select(n)
        .where('organization_id', '=', organizationId)
        .where('revoked_at', 'is', null)
        .executeTakeFirstOrThrow()
      break
  }
  return Number(row.n)
}

/**
 * Runs `create` unless the organization already has its cap of what `cap` counts (`except`: a phone number that
 * does not count, being the one assigned again). The organization row is locked first, before `create` inserts
 * rows referencing it (see leases.ts lockOrganization: the other order deadlocks).
 */
export async function createWithinCap<T>(
  db: Kysely<Database>,
  organizationId: string,
  cap: CapName,
  create: (tx: Transaction<Database>) => Promise<T>,
  options: { except?: string } = {},
): Promise<T | CapReached> {
  return db.transaction().execute(async (tx) => {
    const org = await tx.selectFrom('organizations').select('limits').where('id', '=', organizationId).forUpdate().executeTakeFirst()
    const max = effectiveLimits(org?.limits)[cap]
    if ((await count(tx, organizationId, cap, options.except)) >= max) return { capReached: cap, max }
    return create(tx)
  })
}
