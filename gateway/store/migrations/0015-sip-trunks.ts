import { sql, type Kysely, type Migration } from 'kysely'

/**
 * SIP trunks: an organization's PBX or carrier, allowed in by source address and/or digest credentials,
 * and reached out through a SIP URI. Passwords are sealed (core/secret-box.ts), never stored in clear.
 */
export const sipTrunks: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('sip_trunks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('inbound_allowed_cidrs', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
      .addColumn('inbound_username', 'text')
      .addColumn('inbound_password_sealed', 'text')
      .addColumn('outbound_uri', 'text')
      .addColumn('outbound_username', 'text')
      .addColumn('outbound_password_sealed', 'text')
      .addColumn('outbound_from_number', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute()
    await db.schema.createIndex('sip_trunks_organization_idx').on('sip_trunks').columns(['organization_id', 'created_at']).execute()
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('sip_trunks').ifExists().execute()
  },
}
