import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database, SessionRow } from './schema.js'
import { chargeUsage } from './usage.js'

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
  if (org.max_concurrent_sessions !== null && (await liveLeases(tx, input.organizationId)) >= org.max_concurrent_sessions) {
    return false
  }
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

/** Renews every live lease this process holds; one statement per heartbeat whatever the number of calls. */
export async function renewLeases(db: Kysely<Database>, leaseOwner: string, leaseTtlMs: number): Promise<number> {
  const r = await db
    .updateTable('sessions')
    .set({ lease_expires_at: sql<Date>`now() + ${`${leaseTtlMs} milliseconds`}::interval` })
    .where('lease_owner', '=', leaseOwner)
    .where('lease_expires_at', 'is not', null)
    .where('status', '!=', 'ended')
    .executeTakeFirst()
  return Number(r.numUpdatedRows)
}

/**
 * Ends sessions whose lease expired (their process died): they never stay `connected` forever. The end time
 * is the lease expiry, the last moment a live process vouched for the call. Returns the rows it ended.
 */
export async function sweepExpiredSessions(db: Kysely<Database>, ratePerMinute: number): Promise<SessionRow[]> {
  const rows = await db.transaction().execute(async (tx) => {
    const ended = await tx
      .updateTable('sessions')
      .set({
        status: 'ended',
        ended_at: sql<Date>`lease_expires_at`,
        duration_ms: sql<number>`case when started_at is null then null else greatest(0, floor(extract(epoch from (lease_expires_at - started_at)) * 1000))::int end`,
        end_reason: 'lease_expired',
        lease_expires_at: null,
        charged: true,
        updated_at: sql<Date>`now()`,
      })
      .where('status', '!=', 'ended')
      .where('lease_expires_at', '<=', sql<Date>`now()`)
      .returningAll()
      .execute()
    for (const row of ended) await chargeUsage(tx, row, ratePerMinute)
    return ended
  })
  return rows
}
