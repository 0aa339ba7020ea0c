/**
 * What a session's end writes: the ended row (retried while the database is away, since `session.end` waits for
 * it), and what a finished recording says in `session.update`.
 */
import type { SessionEnd } from '../store/session-ends.js'
import { endSession } from '../store/session-ends.js'
import { retryWhileUnavailable } from '../store/database-errors.js'
import type { SessionRow } from '../store/schema.js'
import type { RecordingOutcome } from '../recording/recording-port.js'
import type { SessionDeps } from './session-deps.js'

/** How long a session's end is retried while the database is unavailable. */
const SESSION_END_RETRY_MS = 60_000

/**
 * Persists the end of a session; undefined (and an error logged) when it could not be written. A database that is
 * away (a restart) gets a minute: this process's heartbeat keeps renewing the row's lease, so no other replica
 * would end it meanwhile.
 */
export async function persistSessionEnd(
  deps: Pick<SessionDeps, 'db' | 'log' | 'usageRatePerMinute'>,
  sessionId: string,
  end: SessionEnd,
): Promise<SessionRow | undefined> {
  try {
    return await retryWhileUnavailable(() => endSession(deps.db, sessionId, end, deps.usageRatePerMinute), { forMs: SESSION_END_RETRY_MS })
  } catch (e) {
    deps.log.error({ err: e, session_id: sessionId }, 'could not persist session end')
    return undefined
  }
}

/** Ends, with `error`, a session that could not start (its agent or config vanished after its key was used). */
export async function endUnstartedSession(deps: Pick<SessionDeps, 'db' | 'usageRatePerMinute'>, sessionId: string): Promise<void> {
  await endSession(
    deps.db,
    sessionId,
    { endReason: 'error', transcriptionDurationSeconds: null, ttsDurationSeconds: null, latencyMs: null },
    deps.usageRatePerMinute,
  )
}

/** The `session.update` fields of a finished recording. */
export function recordingUpdate(outcome: RecordingOutcome, url: string) {
  return outcome.status === 'completed'
    ? { recordingStatus: 'completed' as const, recordingUrl: url, recordingDuration: outcome.durationMs / 1000 }
    : { recordingStatus: 'failed' as const, errorMessage: outcome.error }
}
