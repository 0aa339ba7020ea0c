import { sql, type Kysely, type Migration } from 'kysely'

/**
 * Limits on volume per organization (a penetration test's finding): a token bucket per organization and action,
 * kept in the database so every replica draws from the same bucket, and the operator's overrides of the default
 * rates and caps. Overrides live in one jsonb column of flat keys (`authorize_session.per_second`, `max_agents`),
 * so a new limit needs no migration and a PATCH merges with `||` in one statement.
 */
export const rateLimits: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('rate_limits')
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('tokens', 'double precision', (c) => c.notNull())
      .addColumn('refilled_at', 'timestamptz', (c) => c.notNull())
      // The rate and burst of the latest check, and its outcome: RETURNING sees only the new row, so the outcome
      // and what the Retry-After is computed from are written to it.
      .addColumn('per_second', 'double precision', (c) => c.notNull())
      .addColumn('burst', 'double precision', (c) => c.notNull())
      .addColumn('granted', 'boolean', (c) => c.notNull())
      .addPrimaryKeyConstraint('rate_limits_pkey', ['organization_id', 'action'])
      .execute()
    await db.schema
      .alterTable('organizations')
      .addColumn('limits', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
      .execute()
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('organizations').dropColumn('limits').execute()
    await db.schema.dropTable('rate_limits').ifExists().execute()
  },
}
