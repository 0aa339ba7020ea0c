/** The API shapes the console reads (see /openapi.json). */

export interface SessionListItem {
  session_id: string
  agent_id: string
  agent_name: string
  conversation_id: string
  channel: 'browser' | 'carrier'
  direction: string | null
  status: 'authorized' | 'connected' | 'ended'
  from_phone_number: string | null
  to_phone_number: string | null
  started_at: string | null
  ended_at: string | null
  duration_ms: number | null
  turns: number
  /** Turns with a failure. */
  failed_turns: number
  latency_ms: number | null
  end_reason: string | null
  recording_status: string
}

/** A page of GET /v1/sessions. */
export interface SessionListPage {
  sessions: SessionListItem[]
  /** Pass as `cursor` for the next page; null on the last. */
  next_cursor: string | null
}

/** Why a session ended (core/end-reason.ts; client/test checks the two lists agree). */
export const END_REASONS = [
  'client_disconnected',
  'hangup',
  'caller_hangup',
  'duration_timeout',
  'silence_timeout',
  'shutdown',
  'error',
  'transferred',
  'lease_expired',
  'superseded',
  'stream_not_connected',
  'call_status_timeout',
  'carrier_error',
  'dial_queue_full',
  'call_completed',
  'call_busy',
  'call_no_answer',
  'call_canceled',
  'call_failed',
] as const

export interface LatencyStage {
  name: string
  at_ms: number
  duration_ms: number
}

/**
 * Why a turn failed or went silent: `cause` such as `http_500`, `timeout`, `connect_refused`, `connect_failed`,
 * `invalid_stream`, `stream_broken`, `empty_reply`, `backend_error`, `tts_failed`; `waited_ms` from the end of the caller's turn
 * to the first audio they heard; `heard` the fallback spoken instead (null: nothing).
 */
export interface TurnFailure {
  cause: string
  waited_ms: number
  heard: string | null
  detail: string | null
}

export interface TranscriptEntry {
  timestamp: string
  user_message: string | null
  assistant_message: string | null
  latency_ms: number | null
  latency_breakdown: { stages: LatencyStage[] } | null
  /** Null for a good turn. Absent from gateways older than the field: read it as null. */
  failure?: TurnFailure | null
}

export interface SessionDetails {
  session_id: string
  agent_id: string
  conversation_id: string
  status: string
  started_at: string | null
  ended_at: string | null
  duration_ms: number | null
  from_phone_number: string | null
  to_phone_number: string | null
  ip_address: string | null
  latency_ms: number | null
  transcription_duration_seconds: number | null
  tts_duration_seconds: number | null
  transcript: TranscriptEntry[]
  recording_status: string
  recording_url?: string
  end_reason: string | null
}

export interface WebhookDelivery {
  id: string
  session_id: string
  type: string
  url: string
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  response_status: number | null
  error: string | null
  created_at: string
  last_attempt_at: string | null
}

export interface PhoneAssignment {
  phone_number: string
  carrier_sid: string | null
  friendly_name: string | null
  assigned_at: string
}

export interface Agent {
  id: string
  name: string
  type: string
  created_at: string
  updated_at: string
  assigned_phone_numbers: PhoneAssignment[]
}

export interface AgentDetails {
  id: string
  name: string
  config: { plugins?: { use: string; options?: { url?: string } }[]; session_webhook?: { url?: string } }
  assigned_phone_numbers?: PhoneAssignment[]
}

export interface DailyStats {
  date: string
  sessions: number
  minutes: number
  turns: number
  latency_p50_ms: number | null
  latency_p90_ms: number | null
  latency_p99_ms: number | null
}
