import type { Kysely, Migration } from 'kysely'

/** Each transcript turn keeps why it failed and what the caller heard instead (`failure` in session details). */
export const turnFailures: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('transcript_entries').addColumn('failure', 'jsonb').execute()
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('transcript_entries').dropColumn('failure').execute()
  },
}
