import type { Generated, Selectable } from 'kysely'

import type { CreatedAt, DefaultedTimestamp as Timestamp, Json, NullableJson, NullableTimestamp } from './column-types.js'

/** Where a campaign is in its life. */
export type CampaignStatus = 'draft' | 'running' | 'paused' | 'completed' | 'canceled'

/**
 * What one attempt came to. `outside_window`: claimed, but the window had closed before it could dial;
 * `not_dialled`: the gateway never reached the carrier (its dial queue was full, it was shutting down). Neither
 * counts against the contact's attempts.
 */
export type AttemptOutcome =
  | 'answered'
  | 'machine'
  | 'busy'
  | 'no_answer'
  | 'failed'
  | 'canceled'
  | 'dnc'
  | 'outside_window'
  | 'not_dialled'

/** The outcomes a retry policy may dial again after. */
export const RETRYABLE_OUTCOMES = ['busy', 'no_answer', 'failed', 'machine'] as const
/** One of them. */
export type RetryableOutcome = (typeof RETRYABLE_OUTCOMES)[number]

/** Per retryable outcome: how many attempts in all a contact may get, and the wait before the next. */
export type RetryPolicy = Record<RetryableOutcome, { readonly max_attempts: number; readonly delay_seconds: number }>

/** A contact's state: waiting (maybe for a retry), claimed by a dialer or on a call, or finished. */
export type ContactStatus = 'pending' | 'dialing' | 'done'

/** campaigns: one outbound campaign of an organization. */
export interface CampaignsTable {
  id: string
  organization_id: string
  agent_id: string
  name: string
  from_phone_number: string
  status: CampaignStatus
  /** ISO days of the week (1 Monday .. 7 Sunday) the window is open, in each callee's local time. */
  window_days: number[]
  /** The window's start and end, minutes after local midnight (end exclusive). */
  window_start_minute: number
  window_end_minute: number
  /** The zone of a contact whose number does not name one and who was given none. */
  default_timezone: string
  retry: Json<RetryPolicy>
  max_concurrency: number
  machine_detection: Generated<boolean>
  lifecycle_webhooks: Generated<boolean>
  started_at: NullableTimestamp
  ended_at: NullableTimestamp
  created_at: CreatedAt
  updated_at: Timestamp
}

/** campaign_contacts: one person to call. */
export interface CampaignContactsTable {
  id: string
  campaign_id: string
  organization_id: string
  /** Its place in the campaign's uploads (1-based, across batches). */
  row_number: number
  phone_number: string
  timezone: string
  custom_metadata: NullableJson<Record<string, unknown>>
  status: ContactStatus
  /** Its final outcome, once `done`. */
  disposition: AttemptOutcome | null
  attempts: Generated<number>
  last_outcome: AttemptOutcome | null
  next_attempt_at: Timestamp
  /** The dialer (a replica's lease owner) that claimed it, and until when the claim holds without renewal. */
  claim_owner: string | null
  claim_expires_at: NullableTimestamp
  created_at: CreatedAt
  updated_at: Timestamp
}

/** campaign_attempts: one session placed for a contact, once it ended. */
export interface CampaignAttemptsTable {
  session_id: string
  contact_id: string
  campaign_id: string
  attempt: number
  outcome: AttemptOutcome
  call_status: string | null
  end_reason: string | null
  answered_by: string | null
  started_at: Date
  ended_at: Date
}

/** do_not_call: numbers an organization's outbound calls may not dial. */
export interface DoNotCallTable {
  organization_id: string
  phone_number: string
  source: 'api' | 'csv' | 'call'
  created_at: CreatedAt
}

/** The campaign tables, merged into the store's Database. */
export interface CampaignTables {
  campaigns: CampaignsTable
  campaign_contacts: CampaignContactsTable
  campaign_attempts: CampaignAttemptsTable
  do_not_call: DoNotCallTable
}

export type CampaignRow = Selectable<CampaignsTable>
export type CampaignContactRow = Selectable<CampaignContactsTable>
export type CampaignAttemptRow = Selectable<CampaignAttemptsTable>
