import type { Kysely, Migration } from 'kysely'

/**
 * Why each caller turn ended when it did (`complete_answer`, `base_timeout`, `extended: incomplete_number`, ...):
 * a nullable text column, null for turns stored before and for turns no caller speech ended (a welcome).
 */
export const turnEndReason: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('transcript_entries').addColumn('turn_end', 'text').execute()
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('transcript_entries').dropColumn('turn_end').execute()
  },
}
