import type { Kysely } from 'kysely'
import { completeRecording, createRecording, failRecording } from '../store/recordings.js'
import type { Database, SessionRow } from '../store/schema.js'
import { sharedChunkBatches } from './chunk-batches.js'
import type { RecordingSink } from './recording-port.js'

/**
 * The default sink: chunks in the database, so every replica serves the file; written in batches with the other
 * calls' chunks (chunk-batches.ts).
 */
export function databaseSink(
  db: Kysely<Database>,
  row: SessionRow,
  sampleRate: number,
  url: string,
  retentionDays?: number | undefined,
): RecordingSink {
  const batches = sharedChunkBatches(db)
  return {
    start: () => createRecording(db, { sessionId: row.id, organizationId: row.organization_id, sampleRate, retentionDays }),
    append: (chunks) => batches.append(row.id, chunks),
    complete: (totalSamples) => completeRecording(db, row.id, totalSamples, url),
    fail: (error) => failRecording(db, row.id, error),
  }
}
