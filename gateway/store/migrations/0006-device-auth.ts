import { sql, type Kysely, type Migration } from 'kysely'

/**
 * Device sign-in (`voxgate login`): one row per device authorization, in the database so any replica can answer
 * the CLI's polling. Only the SHA-256 of the device code is kept; the user code is short-lived and shown to the
 * person anyway. API keys get a label so a key made by `login` says where it came from.
 */
export const deviceAuth: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('device_authorizations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('device_code_hash', 'text', (c) => c.notNull().unique())
      .addColumn('user_code', 'text', (c) => c.notNull().unique())
      .addColumn('client_name', 'text')
      .addColumn('client_ip', 'text')
      // pending -> approved | denied; approved -> redeemed (the key is made then, and shown once).
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('organization_id', 'text', (c) => c.references('organizations.id').onDelete('cascade'))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
      .addColumn('decided_at', 'timestamptz')
      .addColumn('redeemed_at', 'timestamptz')
      .execute()
    await db.schema.createIndex('device_authorizations_expires_idx').on('device_authorizations').column('expires_at').execute()
    await db.schema.alterTable('api_keys').addColumn('name', 'text').execute()
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('api_keys').dropColumn('name').execute()
    await db.schema.dropTable('device_authorizations').ifExists().execute()
  },
}
