import type { Kysely } from 'kysely'
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

/** Result of an assignment attempt. */
export type AssignResult = { ok: true; assignment: PhoneAssignment } | { ok: false; reason: 'taken' }

/**
 * Assigns an E.164 number to an agent. Assigning a number the agent already holds updates its carrier sid and
 * friendly name; a number held by any other agent (of any organization) is refused.
 */
export async function assignPhoneNumber(
  db: Kysely<Database>,
  input: { agentId: string; organizationId: string; phoneNumber: string; carrierSid: string | null; friendlyName: string | null },
): Promise<AssignResult> {
  const row = await db
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
  return row === undefined ? { ok: false, reason: 'taken' } : { ok: true, assignment: toAssignment(row) }
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
