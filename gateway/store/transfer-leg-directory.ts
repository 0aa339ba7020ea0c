/**
 * Where each warm transfer's human leg is waited for (`transfer_legs`), so a replica that receives the leg's media
 * stream or a callback about it can relay them to the replica running the transfer. Rows are keyed by a SHA-256 of
 * the leg's token: the table alone does not let anyone open a leg's stream.
 */
import { createHash } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import type { Database } from './schema.js'

/** A row older than this was left by a replica that died mid-transfer (a bridge does not outlive a day's call). */
export const STALE_TRANSFER_LEG_MS = 24 * 60 * 60 * 1000

/** The key a token is stored under. */
export function transferLegKey(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/** Records that `replicaUrl` waits for the leg of `token`; purges rows stale replicas left behind. */
export async function publishTransferLeg(db: Kysely<Database>, token: string, sessionId: string, replicaUrl: string): Promise<void> {
  await db
    .deleteFrom('transfer_legs')
    .where('created_at', '<', sql<Date>`now() - ${sql.lit(`${STALE_TRANSFER_LEG_MS} milliseconds`)}::interval`)
    .execute()
  await db
    .insertInto('transfer_legs')
    .values({ token_hash: transferLegKey(token), session_id: sessionId, replica_url: replicaUrl })
    .execute()
}

/** Forgets the leg of `token`. */
export async function withdrawTransferLeg(db: Kysely<Database>, token: string): Promise<void> {
  await db.deleteFrom('transfer_legs').where('token_hash', '=', transferLegKey(token)).execute()
}

/** The direct address of the replica waiting for the leg of `token`, or undefined when none is. */
export async function transferLegReplica(db: Kysely<Database>, token: string): Promise<string | undefined> {
  const row = await db.selectFrom('transfer_legs').select('replica_url').where('token_hash', '=', transferLegKey(token)).executeTakeFirst()
  return row?.replica_url
}
