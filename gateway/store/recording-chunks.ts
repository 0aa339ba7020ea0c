/**
 * Recording audio: chunk rows of a recording's two channels, appended in batches for many calls at once and read
 * back by sample range for the download.
 */
import { CompiledQuery, type Kysely } from 'kysely'
import type { Database } from './schema.js'

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
