import { type UrlPolicy, resolveSessionConfig, webhookUrlProblem } from '../../pipeline/index.js'
import type Router from '@koa/router'
import { newRouter } from '../http/router.js'
import type { Kysely } from 'kysely'
import type { Database } from '../../gateway/store/schema.js'
import { voxError } from '../../core/errors.js'
import type { Log } from '../../core/log.js'
import { getSessionRow } from '../../gateway/store/sessions.js'
import { getAgentRow } from '../../gateway/store/agents.js'
import {
  claimForResend,
  getSessionDelivery,
  listSessionDeliveries,
  recordDeliveryAttempt,
  toWebhookDelivery,
} from '../../gateway/store/webhook-deliveries.js'
import { deliverOnce } from '../../gateway/webhooks/webhook-queue.js'
import type { ApiState } from '../auth.js'
import type { WebhookEgress } from '../../gateway/webhooks/egress-policy.js'

/** Per-attempt timeout of a resend (the queue's default). */
const RESEND_TIMEOUT_MS = 10_000

const BASE = '/v1/agents/:agent_id/sessions/:session_id/webhook_deliveries'

/**
 * A session's lifecycle webhook deliveries and sending a failed one again (additions to the SPEC). Another
 * organization's session is a 404 like a missing one.
 */
export function webhookDeliveriesRouter(deps: {
  db: Kysely<Database>
  webhookPolicy: UrlPolicy
  log: Log
  egress?: WebhookEgress | undefined
}): Router<ApiState> {
  const { db } = deps
  const r = newRouter<ApiState>()

  r.get(BASE, async (ctx) => {
    const { agent_id, session_id } = ctx.params as { agent_id: string; session_id: string }
    const row = await getSessionRow(db, ctx.state.organizationId, agent_id, session_id)
    if (row === undefined) throw voxError('session_not_found')
    ctx.set('Cache-Control', 'no-store')
    ctx.body = { deliveries: (await listSessionDeliveries(db, ctx.state.organizationId, row.id)).map(toWebhookDelivery) }
  })

  // One attempt with the body first sent, re-signed now, to the session's current webhook URL and headers (so a
  // fixed endpoint receives it); the answer is the delivery with the attempt's outcome.
  r.post(`${BASE}/:delivery_id/redeliver`, async (ctx) => {
    const { agent_id, session_id, delivery_id } = ctx.params as { agent_id: string; session_id: string; delivery_id: string }
    const organizationId = ctx.state.organizationId
    const row = await getSessionRow(db, organizationId, agent_id, session_id)
    if (row === undefined) throw voxError('session_not_found')
    const delivery = await getSessionDelivery(db, organizationId, row.id, delivery_id)
    if (delivery === undefined) throw voxError('webhook_delivery_not_found')
    if (delivery.status !== 'failed') throw voxError('webhook_delivery_not_failed', `the delivery is ${delivery.status}, not failed`)
    if (delivery.body === '') throw voxError('webhook_delivery_not_resendable', 'the body was too large to keep')
    const agent = await getAgentRow(db, organizationId, row.agent_id)
    if (agent === undefined) throw voxError('agent_not_found')
    const policy = deps.webhookPolicy
    const resolved = resolveSessionConfig(agent.config, row.config_override ?? undefined, policy)
    const hook = resolved.ok ? resolved.config.session_webhook : undefined
    const url = hook?.url ?? delivery.url
    const problem = webhookUrlProblem(url, policy) ?? deps.egress?.policy.urlRefusal(url)
    if (problem !== undefined) throw voxError('webhook_delivery_not_resendable', `the webhook URL is refused: ${problem}`)
    if (!(await claimForResend(db, delivery.id))) throw voxError('webhook_delivery_not_failed', 'the delivery is being sent again already')
    const result = await deliverOnce(
      { url, secret: agent.webhook_secret, customHeaders: hook?.custom_headers },
      delivery.type,
      delivery.body,
      delivery.attempts + 1,
      { timeoutMs: RESEND_TIMEOUT_MS, fetch: deps.egress?.fetch, privateTarget: deps.egress?.privateTarget },
    )
    await recordDeliveryAttempt(db, delivery.id, { ...result, final: true })
    deps.log.info({ session_id: row.id, type: delivery.type, ok: result.ok, status: result.status }, 'webhook delivery sent again')
    const updated = await getSessionDelivery(db, organizationId, row.id, delivery.id)
    ctx.body = updated === undefined ? undefined : toWebhookDelivery(updated)
  })

  return r
}
