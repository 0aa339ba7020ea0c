import type { AgentContext } from './agent-step.js'

/**
 * The agent webhook request that tells the backend a warm transfer failed (an addition to the SPEC):
 * `{ type: "transfer.failed", reason, to, turn_id, ... }` with the common fields of every turn request. The caller is
 * back with the agent: the reply is spoken like any turn's, and with no speakable reply the caller hears
 * `TRANSFER_FAILED_DEFAULT_LINES[reason]`, never silence. The request kind `transfer_failed` of `webhook-body.ts` sends
 * this body (a test checks both agree); the builder here documents its shape.
 */

/** Why a warm transfer failed (the gateway's `TransferFailureReason`; the pipeline imports nothing outside itself). */
export type TransferFailedReason = 'no_answer' | 'busy' | 'declined' | 'voicemail' | 'failed' | 'timeout' | 'caller_hung_up'

/** What the backend is told. */
export interface TransferFailedRequest {
  readonly turnId: string
  readonly reason: TransferFailedReason
  /** The number or SIP URI that was dialled. */
  readonly to: string
}

/** The JSON body of a `transfer.failed` agent webhook request. */
export interface TransferFailedRequestBody {
  type: 'transfer.failed'
  session_id: string
  conversation_id: string
  turn_id: string
  custom_metadata?: Record<string, unknown>
  metadata: Record<string, unknown>
  reason: TransferFailedReason
  to: string
  from_phone_number?: string
  to_phone_number?: string
}

/**
 * What the caller hears when the backend's reply has nothing to say. `caller_hung_up` has no line: nobody is left to
 * hear it (the backend is still told).
 */
export const TRANSFER_FAILED_DEFAULT_LINES: Readonly<Record<Exclude<TransferFailedReason, 'caller_hung_up'>, string>> = {
  no_answer: 'I am sorry, nobody answered. I am still here: how else can I help?',
  busy: 'I am sorry, the line was busy. I am still here: how else can I help?',
  declined: 'I am sorry, nobody could take your call just now. I am still here: how else can I help?',
  voicemail: 'I am sorry, I only reached a voicemail. I am still here: how else can I help?',
  failed: 'I am sorry, I could not connect your call. I am still here: how else can I help?',
  timeout: 'I am sorry, nobody could take your call in time. I am still here: how else can I help?',
}

/** The body, in the order and with the rules of `webhookRequestBody` (absent optional fields left out, never null). */
export function transferFailedRequestBody(request: TransferFailedRequest, context: AgentContext): TransferFailedRequestBody {
  const body: TransferFailedRequestBody = {
    type: 'transfer.failed',
    session_id: context.sessionId,
    conversation_id: context.conversationId,
    turn_id: request.turnId,
    ...(context.customMetadata !== undefined && { custom_metadata: context.customMetadata }),
    metadata: context.metadata ?? {},
    reason: request.reason,
    to: request.to,
  }
  if (context.fromPhoneNumber !== undefined) body.from_phone_number = context.fromPhoneNumber
  if (context.toPhoneNumber !== undefined) body.to_phone_number = context.toPhoneNumber
  return body
}
