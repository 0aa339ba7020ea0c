/**
 * What a session writes once its call has stopped, in order: the transcript given a moment to reach a database
 * that is away (`session.end` carries it), the ended row, `session.end` with the transcript, then the recording
 * completed (or failed) at the stored duration and its `session.update`.
 */
import type { SessionWebhookEvent } from '../../pipeline/index.js'
import type { SessionEnd } from '../store/session-ends.js'
import type { SessionRow } from '../store/schema.js'
import { sessionEndEvent, sessionUpdateEvent } from './lifecycle-events.js'
import type { SessionDeps } from './session-deps.js'
import { persistSessionEnd, recordingUpdate } from './session-end.js'
import type { SessionKeeping } from './session-keeping.js'
import { transcriptForEnd } from './transcript/session-transcript.js'
import { TRANSCRIPT_FLUSH_AT_END_MS } from './transcript/transcript-writer.js'

export interface SessionEndWrites {
  readonly deps: SessionDeps
  readonly row: SessionRow
  readonly end: SessionEnd
  readonly keeping: SessionKeeping
  readonly customMetadata: Record<string, unknown> | undefined
  readonly emit: (event: SessionWebhookEvent, build: () => { type: string } & Record<string, unknown>) => void
}

export async function writeSessionEnd(w: SessionEndWrites): Promise<void> {
  const { deps, keeping } = w
  if (!(await keeping.transcriptFlushed(TRANSCRIPT_FLUSH_AT_END_MS))) {
    deps.log.warn({ session_id: w.row.id, pending: keeping.pendingTurns }, 'ending with transcript turns unwritten')
  }
  const row = await persistSessionEnd(deps, w.row.id, w.end)
  deps.log.info({ session_id: w.row.id, reason: w.end.endReason, duration_ms: row?.duration_ms }, 'session ended')
  if (row !== undefined) {
    const transcript = await transcriptForEnd(deps.db, row.id, deps.log)
    w.emit('session.end', () => sessionEndEvent(row, transcript, keeping.recordingEnabled, w.customMetadata))
  }
  const recording = keeping.recording
  const outcome = await keeping.finishRecording(row?.duration_ms ?? undefined)
  if (recording === undefined || outcome === undefined) return
  deps.log.info({ session_id: w.row.id, recording_status: outcome.status }, 'recording finished')
  const update = recordingUpdate(outcome, recording.url)
  w.emit('session.update', () => sessionUpdateEvent(row ?? w.row, update, w.customMetadata))
}
