import type { Kysely, Transaction } from 'kysely'
import type { Database, PhoneNumberRow } from './schema.js'

/** A phone number assignment as the API shows it. */
export interface PhoneAssignment {
  phone_number: string
  carrier_sid: string | null
  friendly_name: string | null
  assigned_at: string
}

function toAssignment(row: PhoneNumberRow): PhoneAssignment {
  return {
    phone_number: row.phone_number,
    carrier_sid: row.carrier_sid,
    friendly_name: row.friendly_name,
    assigned_at: row.assigned_at.toISOString(),
  }
}

/** Assignments of the given agents, grouped by agent id. */
export async function listPhoneNumbers(db: Kysely<Database>, agentIds: string[]): Promise<Map<string, PhoneAssignment[]>> {
  const out = new Map<string, PhoneAssignment[]>()
  if (agentIds.length === 0) return out
  const rows = await db
    .selectFrom('phone_numbers')
    .selectAll()
    .where('agent_id', 'in', agentIds)
    .orderBy('assigned_at')
    .orderBy('phone_number')
    .execute()
  for (const row of rows) {
    const list = out.get(row.agent_id) ?? []
    list.push(toAssignment(row))
    out.set(row.agent_id, list)
  }
  return out
}

/**
 * Result of an assignment attempt: `taken` by another agent of the same organization, or `not_available` to this
 * organization (free, or another organization's: the two are one answer, so nothing is learnt about other tenants).
 */
export type AssignResult = { ok: true; assignment: PhoneAssignment } | { ok: false; reason: 'taken' | 'not_available' }

/**
 * Assigns an E.164 number to an agent when the organization may claim it: reserved for the organization by the
 * operator, or `carrierOwned` (its carrier account owns the number: the caller asked the carrier) and reserved for
 * no other organization. Assigning a number the agent already holds updates its carrier sid and friendly name; a
 * number another agent holds is refused. The reservation is read in the transaction (locked), so a release or a
 * move by the operator at the same moment cannot be overtaken.
 */
export async function assignPhoneNumber(
  db: Kysely<Database>,
  input: {
    agentId: string
    organizationId: string
    phoneNumber: string
    carrierSid: string | null
    friendlyName: string | null
    carrierOwned: boolean
  },
): Promise<AssignResult> {
  // Inside the caller's transaction when it has one (an organization's cap is counted in the same one).
  const inTransaction = <T>(fn: (tx: Transaction<Database>) => Promise<T>): Promise<T> =>
    db.isTransaction ? fn(db as Transaction<Database>) : db.transaction().execute(fn)
  return inTransaction(async (tx) => {
    const reservation = await tx
      .selectFrom('phone_number_reservations')
      .select('organization_id')
      .where('phone_number', '=', input.phoneNumber)
      .forShare()
      .executeTakeFirst()
    const claimable = reservation === undefined ? input.carrierOwned : reservation.organization_id === input.organizationId
    if (!claimable) return { ok: false, reason: 'not_available' } as const
    const row = await tx
      .insertInto('phone_numbers')
      .values({
        phone_number: input.phoneNumber,
        agent_id: input.agentId,
        organization_id: input.organizationId,
        carrier_sid: input.carrierSid,
        friendly_name: input.friendlyName,
      })
      .onConflict((oc) =>
        oc
          .column('phone_number')
          .doUpdateSet({ carrier_sid: input.carrierSid, friendly_name: input.friendlyName })
          .where('phone_numbers.agent_id', '=', input.agentId),
      )
      .returningAll()
      .executeTakeFirst()
    if (row !== undefined) return { ok: true, assignment: toAssignment(row) } as const
    const holder = await tx
      .selectFrom('phone_numbers')
      .select('organization_id')
      .where('phone_number', '=', input.phoneNumber)
      .executeTakeFirst()
    return { ok: false, reason: holder?.organization_id === input.organizationId ? 'taken' : 'not_available' } as const
  })
}

/** Removes an agent's number; false when the agent does not hold it. */
export async function unassignPhoneNumber(db: Kysely<Database>, agentId: string, phoneNumber: string): Promise<boolean> {
  const res = await db
    .deleteFrom('phone_numbers')
    .where('phone_number', '=', phoneNumber)
    .where('agent_id', '=', agentId)
    .executeTakeFirst()
  return Number(res.numDeletedRows) > 0
}

/** The assignment of a number with its agent and organization, for routing carrier calls. */
export async function findPhoneNumber(db: Kysely<Database>, phoneNumber: string): Promise<PhoneNumberRow | undefined> {
  return db.selectFrom('phone_numbers').selectAll().where('phone_number', '=', phoneNumber).executeTakeFirst()
}
