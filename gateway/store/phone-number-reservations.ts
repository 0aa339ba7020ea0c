/**
 * Numbers the operator gives an organization (`PUT /admin/v1/organizations/{id}/phone_numbers/{number}`): the way a
 * number on a SIP trunk, or on a carrier account the gateway cannot ask, becomes claimable by the organization's
 * agents. One organization per number; an assignment of another organization is never taken over by accident.
 */
import type { Kysely } from 'kysely'
import type { Database } from './schema.js'

/** A reserved or assigned number of an organization, as the admin API lists it. */
export interface OrganizationNumber {
  phone_number: string
  /** When the operator reserved it; null: not reserved (the organization's carrier account owned it when claimed). */
  reserved_at: string | null
  /** The organization's agent it is assigned to; null: not assigned yet. */
  agent_id: string | null
  assigned_at: string | null
}

/** Outcome of a reservation. */
export type ReserveResult =
  | { ok: true; created: boolean; number: OrganizationNumber; movedFrom: string | undefined }
  | { ok: false; reason: 'organization_not_found' }
  | { ok: false; reason: 'held_elsewhere'; organizationId: string }

/**
 * Reserves `phoneNumber` for the organization. A number reserved for or assigned to another organization is
 * refused unless `move`: then that organization's reservation and assignment end (the number stops reaching its
 * agent) and the number is this organization's. Reserving again what the organization has changes nothing.
 */
export async function reservePhoneNumber(
  db: Kysely<Database>,
  input: { organizationId: string; phoneNumber: string; move: boolean },
): Promise<ReserveResult> {
  return db.transaction().execute(async (tx) => {
    const org = await tx.selectFrom('organizations').select('id').where('id', '=', input.organizationId).executeTakeFirst()
    if (org === undefined) return { ok: false, reason: 'organization_not_found' } as const
    const reserved = await tx
      .selectFrom('phone_number_reservations')
      .selectAll()
      .where('phone_number', '=', input.phoneNumber)
      .forUpdate()
      .executeTakeFirst()
    const assigned = await tx
      .selectFrom('phone_numbers')
      .select(['organization_id'])
      .where('phone_number', '=', input.phoneNumber)
      .forUpdate()
      .executeTakeFirst()
    const other = [reserved?.organization_id, assigned?.organization_id].find((o) => o !== undefined && o !== input.organizationId)
    if (other !== undefined) {
      if (!input.move) return { ok: false, reason: 'held_elsewhere', organizationId: other } as const
      await tx
        .deleteFrom('phone_numbers')
        .where('phone_number', '=', input.phoneNumber)
        .where('organization_id', '!=', input.organizationId)
        .execute()
    }
    if (reserved?.organization_id !== input.organizationId) {
      // A moved number is reserved anew: its reservation date is the move's.
      if (reserved !== undefined) await tx.deleteFrom('phone_number_reservations').where('phone_number', '=', input.phoneNumber).execute()
      await tx
        .insertInto('phone_number_reservations')
        .values({ phone_number: input.phoneNumber, organization_id: input.organizationId })
        .execute()
    }
    const [number] = await organizationNumbers(tx, input.organizationId, input.phoneNumber)
    if (number === undefined) throw new Error('the reservation just written is missing')
    return { ok: true, created: reserved?.organization_id !== input.organizationId, number, movedFrom: other } as const
  })
}

/**
 * Ends the organization's reservation of `phoneNumber` and its assignment, if any: the operator takes the number
 * back. False when the organization had no such reservation (an assignment alone is the organization's to remove).
 */
export async function releasePhoneNumber(db: Kysely<Database>, organizationId: string, phoneNumber: string): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const res = await tx
      .deleteFrom('phone_number_reservations')
      .where('phone_number', '=', phoneNumber)
      .where('organization_id', '=', organizationId)
      .executeTakeFirst()
    if (Number(res.numDeletedRows) === 0) return false
    await tx.deleteFrom('phone_numbers').where('phone_number', '=', phoneNumber).where('organization_id', '=', organizationId).execute()
    return true
  })
}

/** The organization's reserved and assigned numbers (`only`: that one number), by number. */
export async function organizationNumbers(db: Kysely<Database>, organizationId: string, only?: string): Promise<OrganizationNumber[]> {
  let reservations = db.selectFrom('phone_number_reservations').selectAll().where('organization_id', '=', organizationId)
  let assignments = db.selectFrom('phone_numbers').selectAll().where('organization_id', '=', organizationId)
  if (only !== undefined) {
    reservations = reservations.where('phone_number', '=', only)
    assignments = assignments.where('phone_number', '=', only)
  }
  const out = new Map<string, OrganizationNumber>()
  for (const r of await reservations.execute()) {
    out.set(r.phone_number, { phone_number: r.phone_number, reserved_at: r.reserved_at.toISOString(), agent_id: null, assigned_at: null })
  }
  for (const a of await assignments.execute()) {
    const entry = out.get(a.phone_number) ?? { phone_number: a.phone_number, reserved_at: null, agent_id: null, assigned_at: null }
    out.set(a.phone_number, { ...entry, agent_id: a.agent_id, assigned_at: a.assigned_at.toISOString() })
  }
  return [...out.values()].sort((x, y) => (x.phone_number < y.phone_number ? -1 : x.phone_number > y.phone_number ? 1 : 0))
}

/** The organization a number is reserved for, if any. */
export async function reservedFor(db: Kysely<Database>, phoneNumber: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('phone_number_reservations')
    .select('organization_id')
    .where('phone_number', '=', phoneNumber)
    .executeTakeFirst()
  return row?.organization_id
}
