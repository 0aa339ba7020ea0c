import type { Kysely, Migration } from 'kysely'

/**
 * Where the replica holding a tunnel can be reached directly (`REPLICA_URL`): a webhook request landing on another
 * replica is forwarded there over HTTP, with the database's notification channel as the fallback.
 */
export const tunnelHolderUrl: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('tunnels').addColumn('holder_url', 'text').execute()
  },
  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('tunnels').dropColumn('holder_url').execute()
  },
}
