import type { Kysely } from 'kysely'
import type { Database, WebhookDeliveryRow } from './schema.js'
import { newId } from '../../core/ids.js'

/** Largest body kept for a resend; a larger one is recorded without it (and cannot be sent again). */
export const MAX_STORED_BODY_BYTES = 1024 * 1024

/** A delivery as the API shows it (no body, no URL secrets beyond what the customer configured). */
export interface WebhookDelivery {
  id: string
  session_id: string
  type: string
  url: string
  status: WebhookDeliveryRow['status']
  attempts: number
  response_status: number | null
  error: string | null
  created_at: string
  last_attempt_at: string | null
}

/** Maps a row to the API shape. */
export function toWebhookDelivery(row: WebhookDeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    session_id: row.session_id,
    type: row.type,
    url: row.url,
    status: row.status,
    attempts: row.attempts,
    response_status: row.response_status,
    error: row.error,
    created_at: row.created_at.toISOString(),
    last_attempt_at: row.last_attempt_at?.toISOString() ?? null,
  }
}

/** Records an event about to be delivered; returns its id. */
export async function recordDeliveryStart(
  db: Kysely<Database>,
  d: { sessionId: string; organizationId: string; type: string; url: string; body: string },
): Promise<string> {
  const id = newId('whd')
  const body = Buffer.byteLength(d.body) > MAX_STORED_BODY_BYTES ? '' : d.body
  await db
    .insertInto('webhook_deliveries')
    .values({ id, session_id: d.sessionId, organization_id: d.organizationId, type: d.type, url: d.url, body, status: 'pending' })
    .execute()
  return id
}

/** Records an attempt's outcome: `final` settles the status (delivered or failed), otherwise it stays pending. */
export async function recordDeliveryAttempt(
  db: Kysely<Database>,
  id: string,
  outcome: { ok: boolean; attempts: number; status?: number | undefined; error?: string | undefined; final: boolean },
): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({
      status: outcome.ok ? 'delivered' : outcome.final ? 'failed' : 'pending',
      attempts: outcome.attempts,
      response_status: outcome.status ?? null,
      error: outcome.error ?? null,
      last_attempt_at: new Date(),
    })
    .where('id', '=', id)
    .execute()
}

/** A session's deliveries, oldest first. */
export async function listSessionDeliveries(
  db: Kysely<Database>,
  organizationId: string,
  sessionId: string,
): Promise<WebhookDeliveryRow[]> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('session_id', '=', sessionId)
    .orderBy('created_at')
    .orderBy('id')
    .limit(100)
    .execute()
}

/** One delivery of an organization's session, or undefined. */
export async function getSessionDelivery(
  db: Kysely<Database>,
  organizationId: string,
  sessionId: string,
  id: string,
): Promise<WebhookDeliveryRow | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('session_id', '=', sessionId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/**
 * Claims a failed delivery for a resend (failed -> pending), so two clicks or two replicas cannot send it twice
 * at once. False when it is not (or no longer) failed.
 */
export async function claimForResend(db: Kysely<Database>, id: string): Promise<boolean> {
  const res = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending' })
    .where('id', '=', id)
    .where('status', '=', 'failed')
    .executeTakeFirst()
  return Number(res.numUpdatedRows) > 0
}
