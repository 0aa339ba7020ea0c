import { sql, type Kysely, type Migration } from 'kysely'

/**
 * Recording audio is stored out of line without compression. A chunk is up to 64 KB of PCM16, so Postgres
 * moves it to the TOAST table, and by default tries pglz on it first: audio hardly compresses (silence is stored as
 * null, not as zeros), and the attempt was the larger part of the server's CPU with recording on (300 recorded calls:
 * the Postgres server at 29% of a core before, 7% after; PGlite does the same work on the gateway's own thread).
 * `SET STORAGE EXTERNAL` only changes how new values are stored; chunks written before stay readable as they are.
 */
export const recordingChunkStorage: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await sql`alter table recording_chunks alter column pcm set storage external`.execute(db)
  },
  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await sql`alter table recording_chunks alter column pcm set storage extended`.execute(db)
  },
}
