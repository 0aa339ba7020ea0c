/**
 * The API shapes the console reads, named from the types generated out of the gateway's OpenAPI document
 * (api-types.ts; `npm run console-types` rewrites it and `npm test` fails when it is stale).
 */
import type { components } from './api-types.js'

type Schemas = components['schemas']

/**
 * One row of GET /v1/sessions. Every field is always there (test/openapi checks a real row has exactly the
 * documented fields); the schema's `required` names only those that are never null.
 */
export type SessionListItem = Required<Schemas['SessionList']['sessions'][number]>

/** A page of GET /v1/sessions; `next_cursor` is null on the last page. */
export type SessionListPage = Omit<Schemas['SessionList'], 'sessions'> & { sessions: SessionListItem[] }

/** Why a session ended: the gateway's own list, bundled into the console. */
export { END_REASONS } from '../../core/end-reason.js'

/** GET /v1/agents/{agent_id}/sessions/{session_id}. */
export type SessionDetails = Schemas['SessionDetails']

type StoredTurn = SessionDetails['transcript'][number]

/** One turn of a session's transcript; `failure` is null for a good turn, absent from gateways older than the field (read as null). */
export type TranscriptEntry = Omit<StoredTurn, 'failure'> & Partial<Pick<StoredTurn, 'failure'>>

/** One stage of a turn's `latency_breakdown`. */
export type LatencyStage = NonNullable<Schemas['LatencyBreakdown']>['stages'][number]

/** Why a turn failed or went silent, and what the caller heard instead (see the schema's descriptions). */
export type TurnFailure = NonNullable<Schemas['TurnFailure']>

/** One lifecycle webhook delivery of a session. */
export type WebhookDelivery = Schemas['WebhookDelivery']

/** GET /v1/agents/{agent_id}/sessions/{session_id}/webhook_deliveries. */
export type WebhookDeliveryList = Schemas['WebhookDeliveryList']

export type PhoneAssignment = Schemas['PhoneAssignment']

/** An agent as GET /v1/agents lists it (no config). */
export type Agent = Schemas['AgentSummary']

/** GET /v1/agents. */
export type AgentList = Schemas['AgentList']

/** GET /v1/agents/{agent_id}: the agent with its config. */
export type AgentDetails = Schemas['Agent']

/** One UTC day of GET /v1/stats/daily. */
export type DailyStats = Schemas['DailyStats']

/** GET /v1/stats/daily. */
export type DailyStatsList = Schemas['DailyStatsList']
