import { sql, type Kysely, type Migration } from 'kysely'

/**
 * Two things a warm transfer needs beyond one replica and one clock.
 *
 * `transfer_legs`: which replica waits for each warm transfer's human leg: the carrier opens the leg's media stream and posts its
 * callbacks to the public address, and a balancer may hand them to any replica; the one that gets them finds the
 * leg's replica here and relays them to it. Keyed by a hash of the leg's one-time token (never the token itself).
 *
 * `recordings.held_spans`: when the caller was on hold (a SIP re-INVITE hold, a warm transfer's hold), in ms of the
 * file, listed in the recording's metadata beside the privacy spans.
 */
export const transferLegsHeldSpans: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('transfer_legs')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      // Not a foreign key: a session's rows are never deleted while a leg runs, and a stale row is only a pointer.
      .addColumn('session_id', 'text', (c) => c.notNull())
      // The waiting replica's direct address (REPLICA_URL).
      .addColumn('replica_url', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute()
    // The purge of rows a dead replica left behind reads by age.
    await sql`create index transfer_legs_created_idx on transfer_legs (created_at)`.execute(db)
    await db.schema.alterTable('recordings').addColumn('held_spans', 'jsonb').execute()
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('recordings').dropColumn('held_spans').execute()
    await db.schema.dropTable('transfer_legs').ifExists().execute()
  },
}
