/** Recording retention: finished recordings past their retention, and deleting them with their chunks. */
import { sql, type Kysely } from 'kysely'
import type { Database } from './schema.js'

/** A recording as retention sees it: which session, and the object store key of its file if it has one. */
export interface StoredRecording {
  sessionId: string
  objectKey: string | null
}

/**
 * Finished recordings past their retention at `now`, at most `limit`, oldest first; recordings in progress stay.
 * A recording's retention is its agent's `retention_days` and the process's `processDays`, the shorter where both
 * are set; a recording with neither is kept.
 */
export async function expiredRecordings(
  db: Kysely<Database>,
  now: Date,
  processDays: number | undefined,
  limit: number,
): Promise<StoredRecording[]> {
  const days =
    processDays === undefined
      ? sql<number | null>`retention_days`
      : sql<number>`least(coalesce(retention_days, ${processDays}::integer), ${processDays}::integer)`
  const rows = await db
    .selectFrom('recordings')
    .select(['session_id', 'object_key'])
    .where(sql<boolean>`created_at < ${now.toISOString()}::timestamptz - (${days} * interval '1 day')`)
    .where('status', '!=', 'in_progress')
    .orderBy('created_at')
    .limit(limit)
    .execute()
  return rows.map((r) => ({ sessionId: r.session_id, objectKey: r.object_key }))
}

/**
 * Deletes these recordings (rows, chunks) if their object key is still the one given (one that moved to the object
 * store meanwhile stays, for the next sweep to delete with its file); their sessions report `not_available`.
 * Returns how many went.
 */
export async function deleteRecordings(db: Kysely<Database>, recordings: readonly StoredRecording[]): Promise<number> {
  if (recordings.length === 0) return 0
  return db.transaction().execute(async (tx) => {
    const gone = await tx
      .deleteFrom('recordings')
      .where((eb) =>
        eb.or(
          recordings.map((r) =>
            eb.and([
              eb('session_id', '=', r.sessionId),
              r.objectKey === null ? eb('object_key', 'is', null) : eb('object_key', '=', r.objectKey),
            ]),
          ),
        ),
      )
      .returning('session_id')
      .execute()
    if (gone.length > 0) {
      await tx
        .updateTable('sessions')
        .set({ recording_status: 'not_available', recording_url: null })
        .where(
          'id',
          'in',
          gone.map((g) => g.session_id),
        )
        .execute()
    }
    return gone.length
  })
}
