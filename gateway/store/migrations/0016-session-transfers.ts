import type { Kysely, Migration } from 'kysely'

/**
 * The warm transfers of a session: a jsonb list, one entry per attempt (the human dialled, when they
 * answered and were connected, or why it failed), null when the session made none. On the session row, so a purge of
 * the session takes them with it.
 */
export const sessionTransfers: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('sessions').addColumn('transfers', 'jsonb').execute()
  },
  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('sessions').dropColumn('transfers').execute()
  },
}
