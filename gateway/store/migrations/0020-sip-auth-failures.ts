import { sql, type Kysely, type Migration } from 'kysely'

/**
 * Failed SIP digest answers per source and trunk (a password must not be guessable at line rate). In
 * the database so every replica counts into the same budget and sees the same block: a guesser spread over N
 * replicas behind a balancer gets one budget, not N. One row per (source, trunk): a credit of failures refilled
 * over time, the number of blocks so far (each one twice as long), and until when the source is refused.
 */
export const sipAuthFailures: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('sip_auth_failures')
      // The source as counted: an IPv4 address, or an IPv6 /64 (one subscriber's prefix).
      .addColumn('source', 'text', (c) => c.notNull())
      // '' for credentials that named no trunk's user; not a foreign key, so a deleted trunk keeps its guessers' rows.
      .addColumn('trunk_id', 'text', (c) => c.notNull())
      .addColumn('credit', 'double precision', (c) => c.notNull())
      .addColumn('counted_at', 'timestamptz', (c) => c.notNull())
      .addColumn('strikes', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('blocked_until', 'timestamptz')
      .addPrimaryKeyConstraint('sip_auth_failures_pkey', ['source', 'trunk_id'])
      .execute()
    // The purge of rows quiet for a day reads by age.
    await sql`create index sip_auth_failures_counted_idx on sip_auth_failures (counted_at)`.execute(db)
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('sip_auth_failures').ifExists().execute()
  },
}
