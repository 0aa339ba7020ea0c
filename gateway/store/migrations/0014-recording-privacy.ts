import type { Kysely, Migration } from 'kysely'

/**
 * A recording's privacy metadata: the caller's words silenced because they were redacted, and the spans
 * paused by the backend (`response.recording`); each a jsonb list in ms of the recording, null when there are none.
 * And the agent's `privacy.retention_days` when the recording was made, for the retention sweeper.
 */
export const recordingPrivacy: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .alterTable('recordings')
      .addColumn('silenced_spans', 'jsonb')
      .addColumn('paused_spans', 'jsonb')
      .addColumn('retention_days', 'integer')
      .execute()
  },
  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('recordings').dropColumn('silenced_spans').dropColumn('paused_spans').dropColumn('retention_days').execute()
  },
}
