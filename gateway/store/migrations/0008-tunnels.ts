import { sql, type Kysely, type Migration } from 'kysely'

/**
 * Tunnels opened by `voxgate tunnel`: which agent's webhook points at which tunnel, what it pointed at before
 * (restored when the tunnel closes, or by any replica's sweep once the holding process stops renewing the lease).
 */
export const tunnels: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('tunnels')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      // One live tunnel per agent: its webhook URL can point at one place only.
      .addColumn('agent_id', 'text', (c) => c.notNull().unique().references('agents.id').onDelete('cascade'))
      .addColumn('webhook_url', 'text', (c) => c.notNull())
      // The agent step (`agent.*` plugin entry) and demo_mode before the tunnel; null step: there was none.
      .addColumn('previous_agent_step', 'jsonb')
      .addColumn('previous_demo_mode', 'boolean', (c) => c.notNull())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('lease_expires_at', 'timestamptz', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute()
    await db.schema.createIndex('tunnels_lease_idx').on('tunnels').column('lease_expires_at').execute()
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('tunnels').ifExists().execute()
  },
}
