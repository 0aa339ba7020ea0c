import type { EndReason } from '../../core/end-reason.js'
import type { SessionRow, TranscriptEntryRow } from '../store/schema.js'

/** One transcript entry of the session details (SPEC: timestamp, user_message, assistant_message, latency_ms). */
export interface TranscriptEntry {
  timestamp: string
  user_message: string | null
  assistant_message: string | null
  latency_ms: number | null
}

/** The SPEC's session details record. */
export interface SessionDetails {
  session_id: string
  agent_id: string
  conversation_id: string
  status: string
  started_at: string | null
  ended_at: string | null
  duration_ms: number | null
  metadata: Record<string, unknown> | null
  from_phone_number: string | null
  from_phone_country: string | null
  to_phone_number: string | null
  to_phone_country: string | null
  ip_address: string | null
  country_code: string | null
  transcription_duration_seconds: number | null
  tts_duration_seconds: number | null
  latency_ms: number | null
  transcript: TranscriptEntry[]
  recording_status: string
  recording_url?: string
  end_reason: EndReason | null
  call_status: string | null
}

/** Maps a stored session and its transcript to the details the API returns. */
export function sessionDetails(row: SessionRow, transcript: TranscriptEntryRow[], recordingUrl?: string): SessionDetails {
  return {
    session_id: row.id,
    agent_id: row.agent_id,
    conversation_id: row.conversation_id,
    status: row.status,
    started_at: row.started_at?.toISOString() ?? null,
    ended_at: row.ended_at?.toISOString() ?? null,
    duration_ms: row.duration_ms,
    metadata: (row.metadata as Record<string, unknown> | null) ?? null,
    from_phone_number: row.from_phone_number,
    from_phone_country: row.from_phone_country,
    to_phone_number: row.to_phone_number,
    to_phone_country: row.to_phone_country,
    ip_address: row.ip_address,
    country_code: row.country_code,
    transcription_duration_seconds: row.transcription_duration_seconds,
    tts_duration_seconds: row.tts_duration_seconds,
    latency_ms: row.latency_ms,
    transcript: transcript.map((t) => ({
      timestamp: t.timestamp.toISOString(),
      user_message: t.user_message,
      assistant_message: t.assistant_message,
      latency_ms: t.latency_ms,
    })),
    recording_status: row.recording_status,
    ...(row.recording_status === 'completed' && recordingUrl !== undefined && { recording_url: recordingUrl }),
    end_reason: row.end_reason,
    call_status: row.call_status,
  }
}
