/**
 * Session recordings: the recording row and the `recording_status` / `recording_url` of the session row, written
 * together so session details never disagree with the recording. The audio is in recording-chunks.ts.
 */
import { sql, type Kysely } from 'kysely'
import type { Database, StoredPausedSpan, StoredSilencedSpan } from './schema.js'
import type { StoredHeldSpan } from './schema-transfer.js'

/** A recording as the download and the details see it. */
export interface RecordingInfo {
  sessionId: string
  status: 'in_progress' | 'completed' | 'failed'
  sampleRate: number
  totalSamples: number | null
  errorMessage: string | null
  createdAt: Date
  /** The stereo file's object store key; null: the audio is in the database. */
  objectKey: string | null
  /** Where the caller's redacted words were silenced, and where the backend paused the recording. */
  silencedSpans: StoredSilencedSpan[]
  pausedSpans: StoredPausedSpan[]
  /** When the caller was on hold (a SIP hold, a warm transfer's hold). */
  heldSpans: StoredHeldSpan[]
}

/** Stores a recording's privacy spans (before it is completed, so a finished recording always lists them). */
export async function setRecordingSpans(
  db: Kysely<Database>,
  sessionId: string,
  spans: { silenced: readonly StoredSilencedSpan[]; paused: readonly StoredPausedSpan[]; held?: readonly StoredHeldSpan[] },
): Promise<void> {
  await db
    .updateTable('recordings')
    .set({
      silenced_spans: spans.silenced.length === 0 ? null : JSON.stringify(spans.silenced),
      paused_spans: spans.paused.length === 0 ? null : JSON.stringify(spans.paused),
      held_spans: spans.held === undefined || spans.held.length === 0 ? null : JSON.stringify(spans.held),
    })
    .where('session_id', '=', sessionId)
    .execute()
}

/** Starts a recording of a session: the session then reports `in_progress`. */
export async function createRecording(
  db: Kysely<Database>,
  input: { sessionId: string; organizationId: string; sampleRate: number; retentionDays?: number | undefined },
): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx
      .insertInto('recordings')
      .values({
        session_id: input.sessionId,
        organization_id: input.organizationId,
        status: 'in_progress',
        sample_rate: input.sampleRate,
        retention_days: input.retentionDays ?? null,
      })
      .execute()
    await tx.updateTable('sessions').set({ recording_status: 'in_progress' }).where('id', '=', input.sessionId).execute()
  })
}

/** Marks a recording finished with its length; the session reports `completed` with `url`. */
export async function completeRecording(db: Kysely<Database>, sessionId: string, totalSamples: number, url: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx
      .updateTable('recordings')
      .set({ status: 'completed', total_samples: totalSamples, completed_at: sql<Date>`now()` })
      .where('session_id', '=', sessionId)
      .execute()
    await tx.updateTable('sessions').set({ recording_status: 'completed', recording_url: url }).where('id', '=', sessionId).execute()
  })
}

/**
 * Marks a recording failed and drops its audio (a partial file is not what the caller heard). The session reports
 * `not_available`: the SPEC's details know no failed state; `session.update` says `failed`.
 */
export async function failRecording(db: Kysely<Database>, sessionId: string, errorMessage: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('recording_chunks').where('session_id', '=', sessionId).execute()
    await tx
      .updateTable('recordings')
      .set({ status: 'failed', error_message: errorMessage, completed_at: sql<Date>`now()` })
      .where('session_id', '=', sessionId)
      .execute()
    await tx.updateTable('sessions').set({ recording_status: 'not_available', recording_url: null }).where('id', '=', sessionId).execute()
  })
}

/**
 * Fails the recording of a session whose process died before finishing it; true when there was one in progress.
 * Its chunks are deleted as for any failed recording.
 */
export async function failOrphanedRecording(db: Kysely<Database>, sessionId: string, errorMessage: string): Promise<boolean> {
  const row = await db.selectFrom('recordings').select('status').where('session_id', '=', sessionId).executeTakeFirst()
  if (row?.status !== 'in_progress') return false
  await failRecording(db, sessionId, errorMessage)
  return true
}

/** The recording of a session of this organization and agent, or undefined (another tenant's looks missing). */
export async function findRecording(
  db: Kysely<Database>,
  organizationId: string,
  agentId: string,
  sessionId: string,
): Promise<RecordingInfo | undefined> {
  const row = await db
    .selectFrom('recordings')
    .innerJoin('sessions', 'sessions.id', 'recordings.session_id')
    .select([
      'recordings.session_id',
      'recordings.status',
      'recordings.sample_rate',
      'recordings.total_samples',
      'recordings.error_message',
      'recordings.created_at',
      'recordings.object_key',
      'recordings.silenced_spans',
      'recordings.paused_spans',
      'recordings.held_spans',
    ])
    .where('recordings.session_id', '=', sessionId)
    .where('sessions.agent_id', '=', agentId)
    .where('recordings.organization_id', '=', organizationId)
    .executeTakeFirst()
  if (row === undefined) return undefined
  return {
    sessionId: row.session_id,
    status: row.status as RecordingInfo['status'],
    sampleRate: row.sample_rate,
    totalSamples: row.total_samples === null ? null : Number(row.total_samples),
    errorMessage: row.error_message,
    createdAt: row.created_at,
    objectKey: row.object_key,
    silencedSpans: row.silenced_spans ?? [],
    pausedSpans: row.paused_spans ?? [],
    heldSpans: row.held_spans ?? [],
  }
}

/**
 * Deletes one recording (audio and row); the session reports `not_available` again. Undefined when there was none;
 * else the object store key its file had (null: it was in the database), for the caller to delete.
 */
export async function deleteRecording(db: Kysely<Database>, sessionId: string): Promise<{ objectKey: string | null } | undefined> {
  return db.transaction().execute(async (tx) => {
    const gone = await tx.deleteFrom('recordings').where('session_id', '=', sessionId).returning('object_key').executeTakeFirst()
    await tx.updateTable('sessions').set({ recording_status: 'not_available', recording_url: null }).where('id', '=', sessionId).execute()
    return gone === undefined ? undefined : { objectKey: gone.object_key }
  })
}
