import { sql, type Kysely, type Migration } from 'kysely'

/**
 * Session recordings in the database, so any replica serves any recording: one row per recording and its audio
 * as chunks written while the call runs (one channel each, placed by sample offset on the session's timeline).
 */
export const recordings: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('recordings')
      .addColumn('session_id', 'text', (c) => c.primaryKey().references('sessions.id').onDelete('cascade'))
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('sample_rate', 'integer', (c) => c.notNull())
      .addColumn('total_samples', 'bigint')
      .addColumn('error_message', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('completed_at', 'timestamptz')
      .execute()
    await db.schema.createIndex('recordings_created_idx').on('recordings').column('created_at').execute()

    await db.schema
      .createTable('recording_chunks')
      .addColumn('session_id', 'text', (c) => c.notNull().references('recordings.session_id').onDelete('cascade'))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('channel', 'smallint', (c) => c.notNull())
      .addColumn('start_sample', 'bigint', (c) => c.notNull())
      .addColumn('sample_count', 'integer', (c) => c.notNull())
      // Null: silence (a DTMF mask or a barge-in cut written over audio already stored).
      .addColumn('pcm', 'bytea')
      .addPrimaryKeyConstraint('recording_chunks_pk', ['session_id', 'seq'])
      .execute()
    await db.schema
      .createIndex('recording_chunks_place_idx')
      .on('recording_chunks')
      .columns(['session_id', 'channel', 'start_sample'])
      .execute()
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('recording_chunks').ifExists().execute()
    await db.schema.dropTable('recordings').ifExists().execute()
  },
}
