import { sql, type Kysely, type Migration } from 'kysely'

/** The session list's failed-turns filter and count read only the (few) turns with a failure. */
export const failedTurnsIndex: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await sql`create index transcript_failed_idx on transcript_entries (session_id) where failure is not null`.execute(db)
  },
  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropIndex('transcript_failed_idx').execute()
  },
}
