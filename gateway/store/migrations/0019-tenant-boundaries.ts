import type { Kysely, Migration } from 'kysely'
import { sql } from 'kysely'

/**
 * Two tenant boundaries. `phone_number_reservations`: numbers the operator gave an organization (a SIP trunk's,
 * or one on no carrier account the gateway can ask), the one way besides carrier ownership a number becomes
 * claimable; one organization per number. `sessions.agent_link_id`: the link that authorized a session, so
 * revoking the link can end the keys it issued that never connected.
 */
export const tenantBoundaries: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('phone_number_reservations')
      .addColumn('phone_number', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('reserved_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute()
    await db.schema.createIndex('phone_number_reservations_org_idx').on('phone_number_reservations').column('organization_id').execute()
    await db.schema
      .alterTable('sessions')
      .addColumn('agent_link_id', 'text', (c) => c.references('agent_links.id').onDelete('set null'))
      .execute()
    // Only never-connected sessions of a link are looked up (at revocation): a partial index stays small.
    await sql`create index sessions_agent_link_idx on sessions (agent_link_id) where agent_link_id is not null and status = 'authorized'`.execute(
      db,
    )
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await sql`drop index if exists sessions_agent_link_idx`.execute(db)
    await db.schema.alterTable('sessions').dropColumn('agent_link_id').execute()
    await db.schema.dropTable('phone_number_reservations').ifExists().execute()
  },
}
