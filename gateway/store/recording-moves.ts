/** Moving completed recordings' audio out of the database into the object store. */
import type { Kysely } from 'kysely'
import type { Database } from './schema.js'

/** A completed recording whose audio is still in the database. */
export interface RecordingToMove {
  sessionId: string
  organizationId: string
  sampleRate: number
  totalSamples: number
}

/** Completed recordings still in the database that finished before `finishedBefore`, oldest first. */
export async function recordingsToMove(db: Kysely<Database>, finishedBefore: Date, limit: number): Promise<RecordingToMove[]> {
  const rows = await db
    .selectFrom('recordings')
    .select(['session_id', 'organization_id', 'sample_rate', 'total_samples'])
    .where('status', '=', 'completed')
    .where('object_key', 'is', null)
    .where('completed_at', '<', finishedBefore)
    .orderBy('completed_at')
    .limit(limit)
    .execute()
  return rows.map((r) => ({
    sessionId: r.session_id,
    organizationId: r.organization_id,
    sampleRate: r.sample_rate,
    totalSamples: Number(r.total_samples ?? 0),
  }))
}

/**
 * Records that a recording's file is in the object store under `key` and drops its chunks. False when the recording
 * is gone (deleted meanwhile): the caller then deletes the object it just stored.
 */
export async function markRecordingMoved(db: Kysely<Database>, sessionId: string, key: string): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable('recordings')
      .set({ object_key: key })
      .where('session_id', '=', sessionId)
      .where('status', '=', 'completed')
      .returning('session_id')
      .executeTakeFirst()
    if (row === undefined) return false
    await tx.deleteFrom('recording_chunks').where('session_id', '=', sessionId).execute()
    return true
  })
}
