import { sql, type Kysely, type Migration } from 'kysely'

/**
 * The do-not-call list, one per organization: numbers in E.164 that no outbound call may dial, with where the
 * entry came from (`api`, `csv`, or `call`: the backend's `response.dnc` during a call).
 */
export const doNotCall: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      create table do_not_call (
        organization_id text not null references organizations (id) on delete cascade,
        phone_number text not null,
        source text not null check (source in ('api', 'csv', 'call')),
        created_at timestamptz not null default now(),
        primary key (organization_id, phone_number)
      )`.execute(db)
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('do_not_call').ifExists().execute()
  },
}
