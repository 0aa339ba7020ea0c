import type { Kysely, Migration } from 'kysely'

/** Each transcript turn keeps where its latency went (`latency_breakdown` in session details). */
export const latencyBreakdown: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('transcript_entries').addColumn('latency_breakdown', 'jsonb').execute()
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('transcript_entries').dropColumn('latency_breakdown').execute()
  },
}
