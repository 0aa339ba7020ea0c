import type { LatencyBreakdown } from '../latency/latency-breakdown.js'
import type { AgentContext, AgentRequest } from './agent-step.js'

/** The webhook `type` of each request kind (the opening turn is `session.start`, as the SPEC names it). */
export const WEBHOOK_REQUEST_TYPES = {
  welcome: 'session.start',
  message: 'message',
  data: 'data',
  machine_detection: 'machine_detection',
  transfer_failed: 'transfer.failed',
} as const satisfies Record<AgentRequest['kind'], string>

/** The JSON body of an agent webhook request. */
export interface WebhookRequestBody {
  type: (typeof WEBHOOK_REQUEST_TYPES)[AgentRequest['kind']]
  session_id: string
  conversation_id: string
  turn_id: string
  /** `session.start` only, as on the lifecycle webhook. */
  agent_id?: string
  /** `session.start` only, as on the lifecycle webhook. */
  started_at?: string
  custom_metadata?: Record<string, unknown>
  metadata: Record<string, unknown>
  text?: string
  /** `machine_detection` only (an addition): what answered the call. */
  answered_by?: string
  /** `transfer.failed` only (an addition): why the warm transfer failed, and whom it dialled. */
  reason?: string
  to?: string
  /** `message` only, an addition to the SPEC: the session's previous turn's latency and its breakdown. */
  previous_turn?: { turn_id: string; latency_ms: number; latency_breakdown: LatencyBreakdown }
  data?: unknown
  from_phone_number?: string
  to_phone_number?: string
}

/**
 * The body the customer backend receives for a request: the common fields (`session.start` adds `agent_id` and
 * `started_at`, as its lifecycle twin does), `custom_metadata` (session_webhook's) when configured, the session's
 * `metadata`, then `text` and `previous_turn` (message) or `data` (data), then the phone numbers on telephony sessions. Absent
 * optional fields are left out, never sent as null; `metadata` is always an object, as on lifecycle webhooks.
 */
export function webhookRequestBody(request: AgentRequest, context: AgentContext): WebhookRequestBody {
  const welcome = request.kind === 'welcome'
  const body: WebhookRequestBody = {
    type: WEBHOOK_REQUEST_TYPES[request.kind],
    session_id: context.sessionId,
    conversation_id: context.conversationId,
    turn_id: request.turnId,
    ...(welcome && context.agentId !== undefined && { agent_id: context.agentId }),
    ...(welcome && context.startedAt !== undefined && { started_at: context.startedAt }),
    ...(context.customMetadata !== undefined && { custom_metadata: context.customMetadata }),
    metadata: context.metadata ?? {},
  }
  if (request.kind === 'message') {
    body.text = context.redactWebhookText?.(request.text) ?? request.text
    const p = request.previousTurn
    if (p !== undefined) body.previous_turn = { turn_id: p.turnId, latency_ms: p.latencyMs, latency_breakdown: p.breakdown }
  }
  // A data request always carries `data`; JSON has no undefined, so a missing value is sent as null.
  if (request.kind === 'data') body.data = request.data ?? null
  if (request.kind === 'machine_detection') body.answered_by = request.answeredBy
  if (request.kind === 'transfer_failed') {
    body.reason = request.reason
    body.to = request.to
  }
  if (context.fromPhoneNumber !== undefined) body.from_phone_number = context.fromPhoneNumber
  if (context.toPhoneNumber !== undefined) body.to_phone_number = context.toPhoneNumber
  return body
}
