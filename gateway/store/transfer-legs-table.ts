import type { ColumnType } from 'kysely'

/** transfer_legs: the replica that waits for each warm transfer's human leg (transfer-leg-directory.ts). */
export interface TransferLegsTable {
  /** SHA-256 (hex) of the leg's one-time token. */
  token_hash: string
  session_id: string
  /** The waiting replica's direct address (REPLICA_URL). */
  replica_url: string
  created_at: ColumnType<Date, Date | string | undefined, never>
}
