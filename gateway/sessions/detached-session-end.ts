import type { Kysely } from 'kysely'
import type { Database, SessionRow } from '../store/schema.js'
import type { Log } from '../../core/log.js'
import { getAgentRow } from '../store/agents.js'
import { getOrganizationRow } from '../store/organizations.js'
import { sessionTranscript } from '../store/sessions.js'
import { resolveSessionConfig } from '../../pipeline/config/resolve-session-config.js'
import { WebhookQueue, deliveryOutcome, type DeliveryOptions } from '../webhooks/webhook-queue.js'
import { NO_METRICS, type Metrics } from '../../core/metrics.js'
import { sessionEndEvent } from './lifecycle-events.js'

/**
 * Sends `session.end` for a session that ended without a live CallSession to do it (its process died and the
 * sweeper ended it, or a carrier call never reached its media stream), if the session's config asks for it.
 * `extra` fields are added to the payload. Failures are logged, never thrown.
 */
export async function sendDetachedSessionEnd(
  deps: {
    db: Kysely<Database>
    log: Log
    allowInsecureWebhooks: boolean
    webhookDelivery?: DeliveryOptions | undefined
    metrics?: Metrics | undefined
  },
  row: SessionRow,
  extra: Record<string, unknown> = {},
): Promise<void> {
  try {
    const agent = await getAgentRow(deps.db, row.organization_id, row.agent_id)
    if (agent === undefined) return
    const resolved = resolveSessionConfig(agent.config, row.config_override ?? undefined, {
      allowInsecureLoopback: deps.allowInsecureWebhooks,
    })
    const hook = resolved.ok ? resolved.config.session_webhook : undefined
    if (hook === undefined || !hook.events.includes('session.end')) return
    const org = await getOrganizationRow(deps.db, row.organization_id)
    const queue = new WebhookQueue({ url: hook.url, secret: agent.webhook_secret, customHeaders: hook.custom_headers }, deps.log, {
      allowInsecureLoopback: deps.allowInsecureWebhooks,
      ...deps.webhookDelivery,
      onResult: (r) => (deps.metrics ?? NO_METRICS).webhookDelivery('lifecycle', deliveryOutcome(r)),
    })
    const transcript = await sessionTranscript(deps.db, row.id)
    queue.send({ ...sessionEndEvent(row, transcript, org?.recording_enabled ?? false, hook.custom_metadata), ...extra })
    await queue.drain(60_000)
  } catch (e) {
    deps.log.warn({ err: e, session_id: row.id }, 'could not send session.end for a session that ended without its process')
  }
}
