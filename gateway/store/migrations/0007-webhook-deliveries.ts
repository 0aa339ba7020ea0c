import { sql, type Kysely, type Migration } from 'kysely'

/**
 * What the operator console reads. Lifecycle webhook deliveries (session.start, session.end, session.update) with their outcome, so the console
 * can show each one's status, attempts and response code and send a failed one again with the same body.
 */
export const consoleReads: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      // The exact JSON body sent (re-signed on each attempt); resending uses it unchanged.
      .addColumn('body', 'text', (c) => c.notNull())
      // pending -> delivered | failed; a resend of a failed one goes back through pending.
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('response_status', 'integer')
      .addColumn('error', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('last_attempt_at', 'timestamptz')
      .execute()
    // The session list (newest first) and the daily charts scan an organization's sessions by time.
    await db.schema.createIndex('sessions_org_created_idx').on('sessions').columns(['organization_id', 'created_at']).execute()
    await db.schema.createIndex('transcript_session_idx').on('transcript_entries').columns(['session_id', 'seq']).execute()
    await db.schema.createIndex('webhook_deliveries_session_idx').on('webhook_deliveries').columns(['session_id', 'created_at']).execute()
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('webhook_deliveries').ifExists().execute()
    await db.schema.dropIndex('transcript_session_idx').ifExists().execute()
    await db.schema.dropIndex('sessions_org_created_idx').ifExists().execute()
  },
}
