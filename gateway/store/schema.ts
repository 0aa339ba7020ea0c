import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely'
import type { CreatedAt, Json, NullableJson, NullableTimestamp, Numeric, Timestamp } from './column-types.js'
import type { EndReason } from '../../core/end-reason.js'
import type { CampaignTables } from './campaign-schema.js'
import type { SipTables, SipTrunksTable } from './sip-schema.js'
import type { RecordingHoldColumns, TransferLegsTable } from './schema-transfer.js'

/** organizations: a tenant, with its balance, limits and carrier credentials. */
export interface OrganizationsTable {
  id: string
  name: string
  balance: Numeric
  max_concurrent_sessions: number | null
  recording_enabled: Generated<boolean>
  carrier_account_sid: string | null
  /** Secret: needed in clear to compute carrier signatures; never returned by the API, never logged. */
  carrier_auth_token: string | null
  carrier_api_base_url: string | null
  /** Outbound calls per second the carrier account allows (null: the carrier's default, 1). */
  outbound_calls_per_second: number | null
  /** The organization's next free outbound dial slot (pacing across replicas). */
  outbound_next_slot_at: NullableTimestamp
  /** When one of its outbound calls last went to the carrier (any replica). */
  outbound_last_dial_at: NullableTimestamp
  /** The operator's overrides of the volume limits, flat keys (organization-limits.ts); absent keys: the defaults. */
  limits: ColumnType<Record<string, number>, string | undefined, string>
  created_at: CreatedAt
  updated_at: Timestamp
}

/** api_keys: only the SHA-256 of a key is stored; `prefix` identifies it in listings. */
export interface ApiKeysTable {
  id: string
  organization_id: string
  key_hash: string
  prefix: string
  /** A label, such as `CLI (my-laptop)` for a key made by device sign-in; null for keys made otherwise. */
  name: ColumnType<string | null, string | null | undefined, string | null>
  created_at: CreatedAt
  last_used_at: NullableTimestamp
  revoked_at: NullableTimestamp
}

/** agent_templates: seeded pipeline configurations new agents are cloned from. */
export interface AgentTemplatesTable {
  id: string
  name: string
  description: string
  config: Json
  is_default: Generated<boolean>
  created_at: CreatedAt
}

/** agents: an organization's voice agent and its pipeline configuration. */
export interface AgentsTable {
  id: string
  organization_id: string
  name: string
  type: Generated<string>
  config: Json
  webhook_secret: string
  agent_template_id: string | null
  demo_mode: Generated<boolean>
  created_at: CreatedAt
  updated_at: Timestamp
}

/** agent_links: a revocable link that authorizes browser sessions with one agent; only the token's hash is kept. */
export interface AgentLinksTable {
  id: string
  organization_id: string
  agent_id: string
  token_hash: string
  created_at: CreatedAt
  revoked_at: NullableTimestamp
}

/** phone_numbers: an E.164 number assigned to one agent (globally unique: the voice hook routes by it). */
export interface PhoneNumbersTable {
  phone_number: string
  agent_id: string
  organization_id: string
  carrier_sid: string | null
  friendly_name: string | null
  assigned_at: CreatedAt
}

/** phone_number_reservations: a number the operator gave an organization, which its agents may then claim. */
export interface PhoneNumberReservationsTable {
  phone_number: string
  organization_id: string
  reserved_at: CreatedAt
}

/** conversations: the stable thread that sessions (connections) resume. */
export interface ConversationsTable {
  id: string
  organization_id: string
  agent_id: string
  created_at: CreatedAt
  updated_at: Timestamp
}

/** Session lifecycle as stored. */
export type SessionStatus = 'authorized' | 'connected' | 'ended'

/** sessions: one connection, from authorization to end; also the concurrency lease. */
export interface SessionsTable {
  id: string
  conversation_id: string
  agent_id: string
  organization_id: string
  status: SessionStatus
  channel: 'browser' | 'carrier' | 'sip'
  direction: string | null
  /** SHA-256 of the client_session_key (kept after use so a reused key is told apart from an unknown one). */
  key_hash: string | null
  key_expires_at: NullableTimestamp
  key_used_at: NullableTimestamp
  /** The agent link that authorized it (null: an API key, a carrier or SIP call); revoking the link ends its unused key. */
  agent_link_id: string | null
  /** Per-session override as given at authorization (merged and validated). */
  config_override: NullableJson
  metadata: NullableJson
  call_sid: string | null
  call_status: string | null
  from_phone_number: string | null
  from_phone_country: string | null
  to_phone_number: string | null
  to_phone_country: string | null
  ip_address: string | null
  country_code: string | null
  started_at: NullableTimestamp
  ended_at: NullableTimestamp
  duration_ms: number | null
  end_reason: EndReason | null
  transcription_duration_seconds: number | null
  tts_duration_seconds: number | null
  latency_ms: number | null
  recording_status: Generated<string>
  recording_url: string | null
  /** Where `response.transfer` sent the caller (E.164 or the SIP URI without headers); null otherwise. */
  transferred_to: string | null
  /** Its warm transfers, one entry per attempt (`session-transfers.ts`); null when it made none. */
  transfers: NullableJson<StoredTransfer[]>
  /** initiate_outbound asked for answering machine detection. */
  machine_detection: Generated<boolean>
  /** Its verdict: `human`, `machine`, `machine_beep` or `unknown`; null until one came. */
  answered_by: string | null
  /** When the outbound pacing gate let the call dial (the database's clock); null for other calls. */
  dialed_at: NullableTimestamp
  campaign_contact_id: Generated<string | null> // the outbound campaign contact it was placed for
  /** Concurrency lease: the process holding the slot and until when (renewed by heartbeat). */
  lease_owner: string | null
  lease_expires_at: NullableTimestamp
  charged: Generated<boolean>
  created_at: CreatedAt
  updated_at: Timestamp
}

/** transcript_entries: one row per turn of a session. */
export interface TranscriptEntriesTable {
  id: Generated<number>
  session_id: string
  conversation_id: string
  seq: number
  turn_id: string
  timestamp: Timestamp
  user_message: string | null
  assistant_message: string | null
  latency_ms: number | null
  /** The stages of `latency_ms` (see StoredLatencyBreakdown); null when the turn has no latency. */
  latency_breakdown: NullableJson<StoredLatencyBreakdown>
  /** Why the turn failed and what the caller heard instead; null for a good turn. */
  failure: NullableJson<StoredTurnFailure>
  /** Why the caller's turn ended when it did (`complete_answer`, `extended: incomplete_number`, ...); null without one. */
  turn_end: string | null
}

/** A failed turn as stored: the session details' `failure`, field for field. */
/** One warm transfer attempt of a session, as the console and the session details show it. */
export interface StoredTransfer {
  readonly mode: 'warm'
  /** The number or SIP URI dialled. */
  readonly to: string
  readonly started_at: string
  /** Since the start: when the human answered, when the two legs were bridged, when it failed. */
  readonly answered_after_ms?: number
  readonly connected_after_ms?: number
  readonly failed_after_ms?: number
  /** Why it failed (`no_answer`, `busy`, `declined`, `voicemail`, `failed`, `timeout`, `caller_hung_up`). */
  readonly failed_reason?: string
  /** The phase it failed in (`ringing`, `awaiting_acceptance`...). */
  readonly failed_in?: string
  /** What each party said while bridged, when the backend asked (`transcribe`); redacted as the agent's transcripts. */
  readonly transcript?: readonly StoredTransferLine[]
}

/** One final of a bridged leg: who said it, the text, and when (ms since the transfer started). */
export interface StoredTransferLine {
  readonly speaker: 'caller' | 'human'
  readonly text: string
  readonly at_ms: number
}

export interface StoredTurnFailure {
  cause: string
  waited_ms: number
  heard: string | null
  detail: string | null
}

/**
 * A turn's latency stages as stored: ordered, each `at_ms` after the end of user speech and `duration_ms` after
 * the stage before; the durations add up to the turn's `latency_ms`. The pipeline defines the stage names.
 */
export interface StoredLatencyBreakdown {
  stages: { name: string; at_ms: number; duration_ms: number }[]
}

/** recordings: one per recorded session; `status` is `in_progress`, `completed` or `failed`. */
export interface RecordingsTable extends RecordingHoldColumns {
  session_id: string
  organization_id: string
  status: string
  sample_rate: number
  /** Samples per channel of the finished file; bigint comes back as a string from `pg`, normalised in the store. */
  total_samples: ColumnType<string | number | null, number | null | undefined, number | null>
  error_message: string | null
  created_at: CreatedAt
  completed_at: NullableTimestamp
  /** The stereo file's key in the object store once moved there (its chunks are then gone); null: in the database. */
  object_key: ColumnType<string | null, string | null | undefined, string | null>
  /** The caller's redacted words, silenced; null: none. */
  silenced_spans: NullableJson<StoredSilencedSpan[]>
  /** Spans the backend paused (`response.recording`), both channels silent; null: none. */
  paused_spans: NullableJson<StoredPausedSpan[]>
  /** The agent's `privacy.retention_days` when it was made; null: only the process's retention applies. */
  retention_days: ColumnType<number | null, number | null | undefined, number | null>
}

/** A silenced stretch of a recording's caller channel, ms from its start, and what was said there. */
export interface StoredSilencedSpan {
  from_ms: number
  to_ms: number
  kind: string
}

/** A paused stretch of a recording, ms from its start; `to_ms` null when the pause lasted to the end. */
export interface StoredPausedSpan {
  from_ms: number
  to_ms: number | null
}

/** recording_chunks: audio of one channel placed at a sample offset; a later `seq` overwrites an earlier one. */
export interface RecordingChunksTable {
  session_id: string
  seq: number
  channel: number
  start_sample: ColumnType<string | number, number, number>
  sample_count: number
  /** PCM16 little-endian; null is silence. */
  pcm: Uint8Array | null
}

/** Where a device authorization stands: pending until the person decides; approved ones are redeemed once. */
export type DeviceAuthorizationStatus = 'pending' | 'approved' | 'denied' | 'redeemed'

/** device_authorizations: `voxgate login`'s device codes (only the device code's hash is kept). */
export interface DeviceAuthorizationsTable {
  id: string
  device_code_hash: string
  /** Eight letters, stored without the hyphen. */
  user_code: string
  client_name: string | null
  client_ip: string | null
  status: DeviceAuthorizationStatus
  organization_id: string | null
  created_at: CreatedAt
  expires_at: Timestamp
  decided_at: NullableTimestamp
  redeemed_at: NullableTimestamp
}

/** Where a lifecycle webhook delivery stands. */
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed'

/** webhook_deliveries: each lifecycle webhook event of a session, its body and its latest outcome. */
export interface WebhookDeliveriesTable {
  id: string
  session_id: string
  organization_id: string
  type: string
  url: string
  body: string
  status: WebhookDeliveryStatus
  attempts: Generated<number>
  response_status: number | null
  error: string | null
  created_at: CreatedAt
  last_attempt_at: NullableTimestamp
}

/** tunnels: one per agent whose webhook points at a `voxgate tunnel` (see gateway/tunnels/). */
export interface TunnelsTable {
  id: string
  organization_id: string
  agent_id: string
  webhook_url: string
  previous_agent_step: NullableJson
  previous_demo_mode: boolean
  holder: string
  /** The holding replica's direct address (REPLICA_URL); null: reach it through the notification channel. */
  holder_url: ColumnType<string | null, string | null | undefined, string | null>
  lease_expires_at: Timestamp
  created_at: CreatedAt
}

/** rate_limits: one token bucket per organization and action, shared by every replica (rate-limits.ts). */
export interface RateLimitsTable {
  organization_id: string
  action: string
  tokens: number
  refilled_at: Timestamp
  per_second: number
  burst: number
  granted: boolean
}

/** The whole database as Kysely sees it. */
export interface Database extends CampaignTables, SipTables {
  organizations: OrganizationsTable
  api_keys: ApiKeysTable
  agent_templates: AgentTemplatesTable
  agents: AgentsTable
  agent_links: AgentLinksTable
  phone_numbers: PhoneNumbersTable
  phone_number_reservations: PhoneNumberReservationsTable
  conversations: ConversationsTable
  sessions: SessionsTable
  transcript_entries: TranscriptEntriesTable
  recordings: RecordingsTable
  recording_chunks: RecordingChunksTable
  tunnels: TunnelsTable
  device_authorizations: DeviceAuthorizationsTable
  webhook_deliveries: WebhookDeliveriesTable
  rate_limits: RateLimitsTable
  transfer_legs: TransferLegsTable
}

export type OrganizationRow = Selectable<OrganizationsTable>
export type AgentRow = Selectable<AgentsTable>
export type NewAgent = Insertable<AgentsTable>
export type AgentUpdate = Updateable<AgentsTable>
export type AgentLinkRow = Selectable<AgentLinksTable>
export type PhoneNumberRow = Selectable<PhoneNumbersTable>
export type PhoneNumberReservationRow = Selectable<PhoneNumberReservationsTable>
export type SessionRow = Selectable<SessionsTable>
export type TranscriptEntryRow = Selectable<TranscriptEntriesTable>
export type TunnelRow = Selectable<TunnelsTable>
export type DeviceAuthorizationRow = Selectable<DeviceAuthorizationsTable>
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>
export type SipTrunkRow = Selectable<SipTrunksTable>
