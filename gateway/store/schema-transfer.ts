/** The tables and columns warm transfers and holds add to the schema (schema.ts imports them). */
import type { ColumnType } from 'kysely'
import type { CreatedAt } from './column-types.js'

/** transfer_legs: the replica that waits for each warm transfer's human leg (transfer-leg-directory.ts). */
export interface TransferLegsTable {
  /** SHA-256 (hex) of the leg's one-time token. */
  token_hash: string
  session_id: string
  /** The waiting replica's direct address (REPLICA_URL). */
  replica_url: string
  created_at: CreatedAt
}

/** A stretch of a recording during which the caller was on hold, ms from its start; `to_ms` null: to the end. */
export interface StoredHeldSpan {
  /** `sip_hold` (the peer's re-INVITE) or `transfer_hold` (a warm transfer's hold, before the human answered). */
  kind: string
  from_ms: number
  to_ms: number | null
}

/** The columns of `recordings` that holds add. */
export interface RecordingHoldColumns {
  /** When the caller was on hold; null: never. */
  held_spans: ColumnType<StoredHeldSpan[] | null, string | null | undefined, string | null>
}
