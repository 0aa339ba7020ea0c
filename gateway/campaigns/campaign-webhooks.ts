/**
 * Campaign lifecycle webhooks (`campaign.started`, `campaign.paused`, `campaign.completed`), opt-in per campaign:
 * sent to the campaign agent's session webhook, signed with the agent's webhook secret as session events are.
 * The replica that made the move sends it (a move is won by one replica only). Failures are logged, never thrown.
 */
import type { Kysely } from 'kysely'
import type { Log } from '../../core/log.js'
import { type UrlPolicy, resolveSessionConfig } from '../../pipeline/index.js'
import { getAgentRow } from '../store/agents.js'
import type { CampaignRow } from '../store/campaign-schema.js'
import type { CampaignCounts } from '../store/campaigns.js'
import { campaignCounts } from '../store/campaigns.js'
import type { Database } from '../store/schema.js'
import { WebhookQueue, type DeliveryOptions } from '../webhooks/webhook-queue.js'

/** A campaign lifecycle event. */
export type CampaignEventType = 'campaign.started' | 'campaign.paused' | 'campaign.completed'

/** What sending needs. */
export interface CampaignWebhookDeps {
  readonly db: Kysely<Database>
  readonly log: Log
  readonly webhookPolicy: UrlPolicy
  readonly webhookDelivery?: DeliveryOptions | undefined
}

/** The event's body. */
export function campaignEvent(type: CampaignEventType, campaign: CampaignRow, counts: CampaignCounts) {
  return {
    type,
    campaign_id: campaign.id,
    name: campaign.name,
    agent_id: campaign.agent_id,
    status: campaign.status,
    contacts: counts.total,
    pending: counts.pending + counts.dialing,
    attempts: counts.attempts,
    dispositions: counts.dispositions,
    timestamp: Date.now(),
  }
}

/** Sends `type` for `campaign` if it opted in and its agent has a session webhook; resolves once delivered or given up. */
export async function sendCampaignEvent(deps: CampaignWebhookDeps, campaign: CampaignRow, type: CampaignEventType): Promise<void> {
  if (!campaign.lifecycle_webhooks) return
  try {
    const agent = await getAgentRow(deps.db, campaign.organization_id, campaign.agent_id)
    if (agent === undefined) return
    const resolved = resolveSessionConfig(agent.config, undefined, deps.webhookPolicy)
    const hook = resolved.ok ? resolved.config.session_webhook : undefined
    if (hook === undefined) return
    const queue = new WebhookQueue({ url: hook.url, secret: agent.webhook_secret, customHeaders: hook.custom_headers }, deps.log, {
      policy: deps.webhookPolicy,
      ...deps.webhookDelivery,
    })
    queue.send(campaignEvent(type, campaign, await campaignCounts(deps.db, campaign.id)))
    await queue.drain(60_000)
  } catch (e) {
    deps.log.warn({ err: e, campaign_id: campaign.id, type }, 'could not send a campaign webhook')
  }
}
