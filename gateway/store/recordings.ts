/**
 * Session recordings: the recording row, its audio chunks and the `recording_status` / `recording_url` of the
 * session row, written together so session details never disagree with the recording.
 */
import { CompiledQuery, sql, type Kysely } from 'kysely'
import type { Database, StoredPausedSpan, StoredSilencedSpan } from './schema.js'
import type { StoredHeldSpan } from './schema-transfer.js'

/** Channels of a recording: the caller left, the agent right. */
export const CALLER_CHANNEL = 0
export const AGENT_CHANNEL = 1

/** Longest chunk in samples; readers rely on it to find chunks overlapping a range with the index alone. */
export const MAX_CHUNK_SAMPLES = 32_000

/**
 * One piece of one channel; `pcm` null is silence of `sampleCount` samples. `pcm` holds little-endian PCM16 (two
 * bytes a sample) or, for a call that was G.711 mu-law both ways, mu-law (one byte a sample): its length says which.
 */
export interface RecordingChunk {
  seq: number
  channel: number
  startSample: number
  sampleCount: number
  pcm: Uint8Array | null
}

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

/** One chunk of one session's recording, as `appendRecordingChunkRows` writes it. */
export interface RecordingChunkRow {
  readonly sessionId: string
  readonly chunk: RecordingChunk
}

/** Rows per statement: six parameters each, well inside Postgres's 65,535 parameters per statement. */
export const MAX_CHUNK_ROWS_PER_STATEMENT = 1000

/**
 * Stores chunks of any number of recordings, one statement per `MAX_CHUNK_ROWS_PER_STATEMENT` rows (one
 * statement for many calls' chunks instead of one per call and second). The statement text is built once per row
 * count, not by the query builder, which would build and compile a node for every value of hundreds of rows on each
 * call (the audio goes as binary parameters either way).
 */
export async function appendRecordingChunkRows(db: Kysely<Database>, rows: readonly RecordingChunkRow[]): Promise<void> {
  for (let at = 0; at < rows.length; at += MAX_CHUNK_ROWS_PER_STATEMENT) {
    const part = rows.slice(at, at + MAX_CHUNK_ROWS_PER_STATEMENT)
    const parameters: unknown[] = []
    for (const { sessionId, chunk: c } of part) parameters.push(sessionId, c.seq, c.channel, c.startSample, c.sampleCount, c.pcm)
    // A batch written again after its answer was lost with the connection: those chunks are there already.
    await db.executeQuery(CompiledQuery.raw(insertChunksSql(part.length), parameters))
  }
}

const chunkInsertTexts = new Map<number, string>()

function insertChunksSql(rows: number): string {
  let text = chunkInsertTexts.get(rows)
  if (text === undefined) {
    const values: string[] = []
    for (let r = 0; r < rows; r++) {
      const p = r * 6
      values.push(`($${p + 1}, $${p + 2}, $${p + 3}, $${p + 4}, $${p + 5}, $${p + 6})`)
    }
    text = `insert into "recording_chunks" ("session_id", "seq", "channel", "start_sample", "sample_count", "pcm") values ${values.join(', ')} on conflict ("session_id", "seq") do nothing`
    // Bounded: one text per batch size up to MAX_CHUNK_ROWS_PER_STATEMENT.
    chunkInsertTexts.set(rows, text)
  }
  return text
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

/** Chunks of one channel overlapping samples [from, to), in write order (later ones win). */
export async function readRecordingChunks(
  db: Kysely<Database>,
  sessionId: string,
  channel: number,
  from: number,
  to: number,
): Promise<RecordingChunk[]> {
  const rows = await db
    .selectFrom('recording_chunks')
    .select(['seq', 'channel', 'start_sample', 'sample_count', 'pcm'])
    .where('session_id', '=', sessionId)
    .where('channel', '=', channel)
    .where('start_sample', '<', to)
    .where('start_sample', '>', from - MAX_CHUNK_SAMPLES)
    .orderBy('seq')
    .execute()
  return rows
    .map((r) => ({ seq: r.seq, channel: r.channel, startSample: Number(r.start_sample), sampleCount: r.sample_count, pcm: r.pcm }))
    .filter((c) => c.startSample + c.sampleCount > from)
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
