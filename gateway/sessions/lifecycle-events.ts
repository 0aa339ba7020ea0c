import type { SessionRow, TranscriptEntryRow } from '../store/schema.js'

/** Fields every webhook about a session carries (`session.*` and `transfer.*` events alike). */
export function sessionFields(row: SessionRow, customMetadata: Record<string, unknown> | undefined) {
  return {
    session_id: row.id,
    conversation_id: row.conversation_id,
    ...(customMetadata !== undefined && { custom_metadata: customMetadata }),
    ...(row.from_phone_number !== null && { from_phone_number: row.from_phone_number }),
    ...(row.to_phone_number !== null && { to_phone_number: row.to_phone_number }),
  }
}

/**
 * `session.start` for the session webhook. `turn_id` is the welcome turn's, the one the agent webhook's
 * `session.start` and the client's assistant `turn.start` carry (if the agent does not speak first, no turn
 * follows with it).
 */
export function sessionStartEvent(row: SessionRow, welcomeTurnId: string, customMetadata: Record<string, unknown> | undefined) {
  return {
    type: 'session.start' as const,
    ...sessionFields(row, customMetadata),
    turn_id: welcomeTurnId,
    agent_id: row.agent_id,
    started_at: row.started_at?.toISOString() ?? null,
    metadata: row.metadata ?? {},
  }
}

/**
 * `session.end` with every field of the SPEC's table. The transcript is flattened to one item per role and
 * turn: `{ role, text, timestamp }` with the timestamp in Unix milliseconds.
 */
export function sessionEndEvent(
  row: SessionRow,
  transcript: TranscriptEntryRow[],
  recordingEnabled: boolean,
  customMetadata: Record<string, unknown> | undefined,
) {
  const items: { role: 'user' | 'assistant'; text: string; timestamp: number }[] = []
  for (const t of transcript) {
    const ts = t.timestamp.getTime()
    if (t.user_message !== null) items.push({ role: 'user', text: t.user_message, timestamp: ts })
    if (t.assistant_message !== null) items.push({ role: 'assistant', text: t.assistant_message, timestamp: ts })
  }
  return {
    type: 'session.end' as const,
    ...sessionFields(row, customMetadata),
    agent_id: row.agent_id,
    started_at: row.started_at?.toISOString() ?? null,
    ended_at: row.ended_at?.toISOString() ?? null,
    duration: row.duration_ms,
    transcription_duration_seconds: row.transcription_duration_seconds,
    tts_duration_seconds: row.tts_duration_seconds,
    latency: row.latency_ms,
    ip_address: row.ip_address,
    country_code: row.country_code,
    recording_status: recordingEnabled ? ('enabled' as const) : ('disabled' as const),
    end_reason: row.end_reason,
    // An addition to the SPEC: where `response.transfer` sent the caller.
    ...(row.transferred_to !== null && row.transferred_to !== undefined && { transferred_to: row.transferred_to }),
    metadata: row.metadata ?? {},
    transcript: items,
  }
}

/** `session.update` for asynchronous data such as a finished or failed recording. */
export function sessionUpdateEvent(
  row: SessionRow,
  update: { recordingStatus: 'completed' | 'failed'; recordingUrl?: string; recordingDuration?: number; errorMessage?: string },
  customMetadata: Record<string, unknown> | undefined,
) {
  return {
    type: 'session.update' as const,
    ...sessionFields(row, customMetadata),
    recording_status: update.recordingStatus,
    ...(update.recordingUrl !== undefined && { recording_url: update.recordingUrl }),
    ...(update.recordingDuration !== undefined && { recording_duration: update.recordingDuration }),
    ...(update.errorMessage !== undefined && { error_message: update.errorMessage }),
    metadata: row.metadata ?? {},
  }
}
