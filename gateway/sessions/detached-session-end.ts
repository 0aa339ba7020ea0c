import { type UrlPolicy, resolveSessionConfig } from '../../pipeline/index.js'
import type { Kysely } from 'kysely'
import type { Database, SessionRow } from '../store/schema.js'
import type { Log } from '../../core/log.js'
import { getAgentRow } from '../store/agents.js'
import { getOrganizationRow } from '../store/organizations.js'
import { sessionTranscript } from '../store/sessions.js'
import { WebhookQueue, deliveryOutcome, type DeliveryOptions } from '../webhooks/webhook-queue.js'
import { NO_METRICS, type Metrics } from '../../core/metrics.js'
import { sessionEndEvent, sessionUpdateEvent } from './lifecycle-events.js'
import { sessionDeliveryJournal } from './delivery-journal.js'
import { failOrphanedRecording } from '../store/recordings.js'

/** Why the recording of a session ended by the sweeper failed. */
export const ORPHANED_RECORDING_ERROR = 'the gateway recording this session stopped before the session ended'

/**
 * Sends `session.end` for a session that ended without a live CallSession to do it (its process died and the
 * sweeper ended it, or a carrier call never reached its media stream), if the session's config asks for it.
 * `extra` fields are added to the payload. A recording left in progress by the dead process fails, with
 * `session.update` saying so. Failures are logged, never thrown.
 */
export async function sendDetachedSessionEnd(
  deps: {
    db: Kysely<Database>
    log: Log
    webhookPolicy: UrlPolicy
    webhookDelivery?: DeliveryOptions | undefined
    metrics?: Metrics | undefined
  },
  row: SessionRow,
  extra: Record<string, unknown> = {},
): Promise<void> {
  try {
    const orphaned = await failOrphanedRecording(deps.db, row.id, ORPHANED_RECORDING_ERROR)
    const agent = await getAgentRow(deps.db, row.organization_id, row.agent_id)
    if (agent === undefined) return
    const resolved = resolveSessionConfig(agent.config, row.config_override ?? undefined, deps.webhookPolicy)
    const hook = resolved.ok ? resolved.config.session_webhook : undefined
    if (hook === undefined || !(hook.events.includes('session.end') || (orphaned && hook.events.includes('session.update')))) return
    const org = await getOrganizationRow(deps.db, row.organization_id)
    const queue = new WebhookQueue({ url: hook.url, secret: agent.webhook_secret, customHeaders: hook.custom_headers }, deps.log, {
      policy: deps.webhookPolicy,
      ...deps.webhookDelivery,
      onResult: (r) => (deps.metrics ?? NO_METRICS).webhookDelivery('lifecycle', deliveryOutcome(r)),
      journal: sessionDeliveryJournal(deps.db, deps.log, row),
    })
    const transcript = await sessionTranscript(deps.db, row.id)
    if (hook.events.includes('session.end')) {
      queue.send({ ...sessionEndEvent(row, transcript, org?.recording_enabled ?? false, hook.custom_metadata), ...extra })
    }
    if (orphaned && hook.events.includes('session.update')) {
      queue.send(sessionUpdateEvent(row, { recordingStatus: 'failed', errorMessage: ORPHANED_RECORDING_ERROR }, hook.custom_metadata))
    }
    await queue.drain(60_000)
  } catch (e) {
    deps.log.warn({ err: e, session_id: row.id }, 'could not send session.end for a session that ended without its process')
  }
}
