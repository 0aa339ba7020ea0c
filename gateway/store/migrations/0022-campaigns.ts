import { sql, type Kysely, type Migration } from 'kysely'

/**
 * Outbound campaigns: a campaign (agent, caller id, calling window, retry policy, concurrency), its contacts and
 * each contact's attempts. The window is kept as columns (ISO days, minutes from midnight) so the dialer's claim
 * query can test it against each contact's own time zone in SQL. A session placed for a contact names it
 * (`sessions.campaign_contact_id`), written in the transaction that creates the session: a contact whose
 * replica died is never dialled again while a session of it is still live.
 */
export const campaigns: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      create table campaigns (
        id text primary key,
        organization_id text not null references organizations (id) on delete cascade,
        agent_id text not null,
        name text not null,
        from_phone_number text not null,
        status text not null check (status in ('draft', 'running', 'paused', 'completed', 'canceled')),
        window_days smallint[] not null,
        window_start_minute integer not null check (window_start_minute between 0 and 1439),
        window_end_minute integer not null check (window_end_minute between 1 and 1440),
        default_timezone text not null,
        retry jsonb not null,
        max_concurrency integer not null check (max_concurrency > 0),
        machine_detection boolean not null default false,
        lifecycle_webhooks boolean not null default false,
        started_at timestamptz,
        ended_at timestamptz,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      )`.execute(db)
    await sql`create index campaigns_org_idx on campaigns (organization_id, created_at desc)`.execute(db)
    // The dialer looks for running campaigns on every replica.
    await sql`create index campaigns_running_idx on campaigns (status) where status = 'running'`.execute(db)
    await sql`
      create table campaign_contacts (
        id text primary key,
        campaign_id text not null references campaigns (id) on delete cascade,
        organization_id text not null,
        row_number integer not null,
        phone_number text not null,
        timezone text not null,
        custom_metadata jsonb,
        status text not null check (status in ('pending', 'dialing', 'done')),
        disposition text,
        attempts integer not null default 0,
        last_outcome text,
        next_attempt_at timestamptz not null default now(),
        claim_owner text,
        claim_expires_at timestamptz,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        unique (campaign_id, phone_number)
      )`.execute(db)
    await sql`create index campaign_contacts_due_idx on campaign_contacts (campaign_id, status, next_attempt_at)`.execute(db)
    await sql`create index campaign_contacts_list_idx on campaign_contacts (campaign_id, row_number)`.execute(db)
    await sql`
      create table campaign_attempts (
        session_id text primary key,
        contact_id text not null references campaign_contacts (id) on delete cascade,
        campaign_id text not null,
        attempt integer not null,
        outcome text not null,
        call_status text,
        end_reason text,
        answered_by text,
        started_at timestamptz not null,
        ended_at timestamptz not null
      )`.execute(db)
    await sql`create index campaign_attempts_contact_idx on campaign_attempts (contact_id, attempt)`.execute(db)
    await db.schema.alterTable('sessions').addColumn('campaign_contact_id', 'text').execute()
    await sql`create index sessions_campaign_contact_idx on sessions (campaign_contact_id) where campaign_contact_id is not null`.execute(
      db,
    )
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('sessions').dropColumn('campaign_contact_id').execute()
    await db.schema.dropTable('campaign_attempts').ifExists().execute()
    await db.schema.dropTable('campaign_contacts').ifExists().execute()
    await db.schema.dropTable('campaigns').ifExists().execute()
  },
}
