/**
 * The lifecycle webhooks of a warm transfer: `transfer.started`, `transfer.answered`,
 * `transfer.connected` and `transfer.failed`, built from the machine's timed facts like the `session.*` events in
 * `../lifecycle-events.ts` (the same common fields, absent ones left out, `metadata` always an object). Sent when the
 * agent's `session_webhook.events` lists them (opt-in: not in the default list).
 */
import type { SessionRow } from '../store/schema.js'
import { sessionFields } from '../sessions/lifecycle-events.js'
import type { TransferFact } from './transfer-steps.js'

/** The transfer an event is about. */
export interface TransferSubject {
  /** The number or SIP URI dialled (without SIP headers, as `transferred_to` stores it). */
  readonly to: string
  /** When the fact happened (the webhook's `occurred_at`). */
  readonly at: Date
}

/** A transfer lifecycle webhook's body. */
export type TransferLifecycleEvent = ReturnType<typeof transferLifecycleEvent>

/**
 * The webhook for one fact. Timings are ms since the transfer started: `elapsed_ms` (this fact), `answered_after_ms`
 * (when the human answered, on `transfer.connected` and on a `transfer.failed` after an answer).
 */
export function transferLifecycleEvent(
  row: SessionRow,
  fact: TransferFact,
  subject: TransferSubject,
  customMetadata: Record<string, unknown> | undefined,
) {
  const answeredAfter = fact.type === 'transfer.connected' || fact.type === 'transfer.failed' ? fact.answeredAtMs : undefined
  return {
    type: fact.type,
    ...sessionFields(row, customMetadata),
    agent_id: row.agent_id,
    mode: 'warm' as const,
    to: subject.to,
    occurred_at: subject.at.toISOString(),
    elapsed_ms: fact.atMs,
    ...(answeredAfter !== undefined && { answered_after_ms: answeredAfter }),
    ...(fact.type === 'transfer.failed' && { reason: fact.reason, failed_in: fact.phase }),
    metadata: row.metadata ?? {},
  }
}
