import type { Kysely, Migration } from 'kysely'

/**
 * Finished recordings may move to an object store: `object_key` is the stereo file's key once it is there (its
 * chunks are then deleted); null keeps the audio in `recording_chunks`.
 */
export const recordingObjects: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('recordings').addColumn('object_key', 'text').execute()
  },
  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('recordings').dropColumn('object_key').execute()
  },
}
