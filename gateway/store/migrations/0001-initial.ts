import { sql, type Kysely, type Migration } from 'kysely'

/** The initial schema: tenants, keys, templates, agents, numbers, conversations, sessions, transcripts. */
export const initial: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('organizations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('balance', 'numeric(20, 6)')
      .addColumn('max_concurrent_sessions', 'integer')
      .addColumn('recording_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('carrier_account_sid', 'text')
      .addColumn('carrier_auth_token', 'text')
      .addColumn('carrier_api_base_url', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute()

    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('last_used_at', 'timestamptz')
      .addColumn('revoked_at', 'timestamptz')
      .execute()

    await db.schema
      .createTable('agent_templates')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('config', 'jsonb', (c) => c.notNull())
      .addColumn('is_default', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute()

    await db.schema
      .createTable('agents')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull().defaultTo('voice'))
      .addColumn('config', 'jsonb', (c) => c.notNull())
      .addColumn('webhook_secret', 'text', (c) => c.notNull())
      .addColumn('agent_template_id', 'text', (c) => c.references('agent_templates.id').onDelete('set null'))
      .addColumn('demo_mode', 'boolean', (c) => c.notNull().defaultTo(true))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute()
    await db.schema.createIndex('agents_org_idx').on('agents').columns(['organization_id', 'created_at']).execute()

    await db.schema
      .createTable('phone_numbers')
      .addColumn('phone_number', 'text', (c) => c.primaryKey())
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('carrier_sid', 'text')
      .addColumn('friendly_name', 'text')
      .addColumn('assigned_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute()
    await db.schema.createIndex('phone_numbers_agent_idx').on('phone_numbers').column('agent_id').execute()

    await db.schema
      .createTable('conversations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute()

    await db.schema
      .createTable('sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('direction', 'text')
      .addColumn('key_hash', 'text', (c) => c.unique())
      .addColumn('key_expires_at', 'timestamptz')
      .addColumn('key_used_at', 'timestamptz')
      .addColumn('config_override', 'jsonb')
      .addColumn('metadata', 'jsonb')
      .addColumn('call_sid', 'text')
      .addColumn('call_status', 'text')
      .addColumn('from_phone_number', 'text')
      .addColumn('from_phone_country', 'text')
      .addColumn('to_phone_number', 'text')
      .addColumn('to_phone_country', 'text')
      .addColumn('ip_address', 'text')
      .addColumn('country_code', 'text')
      .addColumn('started_at', 'timestamptz')
      .addColumn('ended_at', 'timestamptz')
      .addColumn('duration_ms', 'integer')
      .addColumn('end_reason', 'text')
      .addColumn('transcription_duration_seconds', 'double precision')
      .addColumn('tts_duration_seconds', 'double precision')
      .addColumn('latency_ms', 'double precision')
      .addColumn('recording_status', 'text', (c) => c.notNull().defaultTo('not_available'))
      .addColumn('recording_url', 'text')
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'timestamptz')
      .addColumn('charged', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute()
    await db.schema.createIndex('sessions_conversation_idx').on('sessions').column('conversation_id').execute()
    await db.schema.createIndex('sessions_lease_idx').on('sessions').columns(['organization_id', 'lease_expires_at']).execute()
    await db.schema.createIndex('sessions_call_sid_idx').on('sessions').column('call_sid').execute()

    await db.schema
      .createTable('transcript_entries')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
      .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('turn_id', 'text', (c) => c.notNull())
      .addColumn('timestamp', 'timestamptz', (c) => c.notNull())
      .addColumn('user_message', 'text')
      .addColumn('assistant_message', 'text')
      .addColumn('latency_ms', 'double precision')
      .addUniqueConstraint('transcript_entries_session_seq', ['session_id', 'seq'])
      .execute()
    await db.schema.createIndex('transcript_conversation_idx').on('transcript_entries').columns(['conversation_id', 'id']).execute()
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    for (const t of [
      'transcript_entries',
      'sessions',
      'conversations',
      'phone_numbers',
      'agents',
      'agent_templates',
      'api_keys',
      'organizations',
    ]) {
      await db.schema.dropTable(t).ifExists().execute()
    }
  },
}
