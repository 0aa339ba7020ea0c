import type { EndReason } from '../../core/end-reason.js'
import type { SessionRow, StoredLatencyBreakdown, StoredTransfer, StoredTurnFailure, TranscriptEntryRow } from '../store/schema.js'

/**
 * One transcript entry of the session details (SPEC: timestamp, user_message, assistant_message, latency_ms;
 * `latency_breakdown` is an addition: the stages of `latency_ms`, null when it is null).
 */
export interface TranscriptEntry {
  timestamp: string
  user_message: string | null
  assistant_message: string | null
  latency_ms: number | null
  latency_breakdown: StoredLatencyBreakdown | null
  /** An addition: why the turn failed (`cause`, `waited_ms`, `heard`, `detail`); null for a good turn. */
  failure: StoredTurnFailure | null
  /** An addition: why the caller's turn ended when it did (`complete_answer`, `extended: incomplete_number`, ...). */
  turn_end: string | null
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
  metadata: Record<string, unknown>
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
  /** Call control (additions): where a transfer sent the call, and what answered an outbound call. */
  transferred_to: string | null
  /** An addition: the session's warm transfers, one per attempt (legs, timings, why one failed). */
  transfers: StoredTransfer[]
  answered_by: string | null
}

/** The figures of a session still running on this process, as its CallSession counts them. */
export interface LiveUsage {
  transcriptionDurationSeconds: number
  ttsDurationSeconds: number
  /** Mean latency of the turns so far; null before the first. */
  latencyMs: number | null
}

/** A running session's usage figures, rounded as they are stored at the end. */
export function liveUsage(usage: { transcriptionSeconds: number; ttsSeconds: number; latencySamples: readonly number[] }): LiveUsage {
  const samples = usage.latencySamples
  const latency = samples.length === 0 ? null : samples.reduce((a, b) => a + b, 0) / samples.length
  const round = (n: number) => Math.round(n * 1000) / 1000
  return {
    transcriptionDurationSeconds: round(usage.transcriptionSeconds),
    ttsDurationSeconds: round(usage.ttsSeconds),
    latencyMs: latency === null ? null : round(latency),
  }
}

/** What the details of a running session are computed with; both are optional. */
export interface DetailsOptions {
  /** The live figures when the session runs on this process. */
  live?: LiveUsage | undefined
  /** The clock a running session's duration is counted to. */
  now?: Date | undefined
  recordingUrl?: string | undefined
}

/**
 * Maps a stored session and its transcript to the details the API returns. A session that is still connected
 * reports its figures so far: the duration to now, the live usage when it runs on this process, and otherwise
 * what its rows hold (the mean latency of the stored turns; speech seconds only the owning process knows).
 */
export function sessionDetails(row: SessionRow, transcript: TranscriptEntryRow[], options: DetailsOptions = {}): SessionDetails {
  const running = row.status === 'connected' && row.ended_at === null
  const live = running ? options.live : undefined
  const now = options.now ?? new Date()
  const runningFor = running && row.started_at !== null ? Math.max(0, now.getTime() - row.started_at.getTime()) : null
  return {
    session_id: row.id,
    agent_id: row.agent_id,
    conversation_id: row.conversation_id,
    status: row.status,
    started_at: row.started_at?.toISOString() ?? null,
    ended_at: row.ended_at?.toISOString() ?? null,
    duration_ms: row.duration_ms ?? runningFor,
    metadata: (row.metadata as Record<string, unknown> | null) ?? {},
    from_phone_number: row.from_phone_number,
    from_phone_country: row.from_phone_country,
    to_phone_number: row.to_phone_number,
    to_phone_country: row.to_phone_country,
    ip_address: row.ip_address,
    country_code: row.country_code,
    transcription_duration_seconds: row.transcription_duration_seconds ?? live?.transcriptionDurationSeconds ?? null,
    tts_duration_seconds: row.tts_duration_seconds ?? live?.ttsDurationSeconds ?? null,
    latency_ms: row.latency_ms ?? (running ? (live?.latencyMs ?? meanLatency(transcript)) : null),
    transcript: transcript.map((t) => ({
      timestamp: t.timestamp.toISOString(),
      user_message: t.user_message,
      assistant_message: t.assistant_message,
      latency_ms: t.latency_ms,
      latency_breakdown: t.latency_breakdown,
      failure: t.failure ?? null,
      turn_end: t.turn_end ?? null,
    })),
    recording_status: row.recording_status,
    ...(row.recording_status === 'completed' && options.recordingUrl !== undefined && { recording_url: options.recordingUrl }),
    end_reason: row.end_reason,
    call_status: row.call_status,
    transferred_to: row.transferred_to,
    transfers: row.transfers ?? [],
    answered_by: row.answered_by,
  }
}

/** Mean latency of the stored turns that have one, rounded as a finished session's is; null when none has. */
function meanLatency(transcript: TranscriptEntryRow[]): number | null {
  const samples = transcript.flatMap((t) => (t.latency_ms === null ? [] : [t.latency_ms]))
  if (samples.length === 0) return null
  return Math.round((samples.reduce((a, b) => a + b, 0) / samples.length) * 1000) / 1000
}
