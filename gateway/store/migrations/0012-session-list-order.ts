import { sql, type Kysely, type Migration } from 'kysely'

/**
 * The console's session list pages through an organization's sessions newest first by their list time (the start,
 * or the creation of a session that never started) and id; this index serves that order and its cursor, so a
 * page reads about `limit` rows however long the history.
 */
export const sessionListOrder: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await sql`create index sessions_org_listed_idx on sessions (organization_id, (coalesce(started_at, created_at)) desc, id collate "C" desc)`.execute(
      db,
    )
  },
  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropIndex('sessions_org_listed_idx').execute()
  },
}
