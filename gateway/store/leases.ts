/** Concurrency leases: counting, taking and renewing them; releasing one is part of ending a row (session-ends.ts). */
import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from './schema.js'

/** Number of sessions of the organization holding a live concurrency lease. */
export async function liveLeases(db: Kysely<Database>, organizationId: string): Promise<number> {
  const r = await db
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', organizationId)
    .where('lease_expires_at', '>', sql<Date>`now()`)
    .executeTakeFirstOrThrow()
  return Number(r.n)
}

/**
 * The concurrency rule: the organization already holds `max` live leases (`null`: no limit). For a decision that
 * must hold, call it inside the transaction that locked the organization row and then takes the slot.
 */
export async function atConcurrencyLimit(db: Kysely<Database>, organizationId: string, max: number | null): Promise<boolean> {
  return max !== null && (await liveLeases(db, organizationId)) >= max
}

/**
 * Locks the organization row for the rest of the transaction. A transaction that will take a slot must do this
 * before it inserts rows referencing the organization: those inserts take a key-share lock on it, and two
 * transactions each holding one and then asking for the row lock deadlock (Postgres kills one of them).
 */
export async function lockOrganization(tx: Transaction<Database>, organizationId: string): Promise<void> {
  await tx.selectFrom('organizations').select(['id']).where('id', '=', organizationId).forUpdate().execute()
}

/**
 * Takes a concurrency slot for a session that is not connected yet (a carrier call between voice hook and
 * media stream, or an outbound call that is still ringing). Returns false when the limit is reached.
 */
export async function acquireLease(
  tx: Transaction<Database>,
  input: { sessionId: string; organizationId: string; leaseOwner: string; leaseTtlMs: number },
): Promise<boolean> {
  const org = await tx
    .selectFrom('organizations')
    .select(['max_concurrent_sessions'])
    .where('id', '=', input.organizationId)
    .forUpdate()
    .executeTakeFirstOrThrow()
  if (await atConcurrencyLimit(tx, input.organizationId, org.max_concurrent_sessions)) return false
  await tx
    .updateTable('sessions')
    .set({
      lease_owner: input.leaseOwner,
      lease_expires_at: sql<Date>`now() + ${`${input.leaseTtlMs} milliseconds`}::interval`,
    })
    .where('id', '=', input.sessionId)
    .execute()
  return true
}

/**
 * Renews every lease this process holds that has not expired; one statement per heartbeat whatever the number
 * of calls. Returns the sessions renewed. An expired lease is never renewed, even before a sweep ended its row:
 * other replicas stopped counting it when it expired, so its session must end rather than run on uncounted.
 */
export async function renewLeases(db: Kysely<Database>, leaseOwner: string, leaseTtlMs: number): Promise<string[]> {
  const rows = await db
    .updateTable('sessions')
    .set({ lease_expires_at: sql<Date>`now() + ${`${leaseTtlMs} milliseconds`}::interval` })
    .where('lease_owner', '=', leaseOwner)
    .where('lease_expires_at', '>', sql<Date>`now()`)
    .where('status', '!=', 'ended')
    .returning('id')
    .execute()
  return rows.map((r) => r.id)
}
