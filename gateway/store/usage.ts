import type { Transaction } from 'kysely'
import { sql } from 'kysely'
import type { Database, SessionRow } from './schema.js'

/**
 * Charges an ended session's connected time from its organization's balance at `ratePerMinute` (organizations
 * with an unlimited balance, null, are not charged). Runs inside the transaction that ends the session, so a
 * session is charged exactly once.
 */
export async function chargeUsage(tx: Transaction<Database>, row: SessionRow, ratePerMinute: number): Promise<void> {
  if (ratePerMinute <= 0 || row.duration_ms === null || row.duration_ms <= 0) return
  const cost = (row.duration_ms / 60_000) * ratePerMinute
  await tx
    .updateTable('organizations')
    .set({ balance: sql<string>`balance - ${cost}`, updated_at: sql<Date>`now()` })
    .where('id', '=', row.organization_id)
    .where('balance', 'is not', null)
    .execute()
}
