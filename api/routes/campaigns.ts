/**
 * /v1/campaigns: an organization's outbound campaigns. Created as drafts; contacts are added in batches
 * (campaign-contacts.ts); start, pause, resume and cancel move the campaign, and the replicas' dialers
 * (gateway/campaigns) call its contacts while it runs. Opt-in lifecycle webhooks go to the agent's session webhook.
 */
import type Router from '@koa/router'
import type { Kysely } from 'kysely'
import { type CallingWindow, DAY_NAMES, isKnownTimeZone, nextWindowOpening } from '../../core/calling-window.js'
import { voxError } from '../../core/errors.js'
import { normalisePhoneNumber } from '../../core/phone.js'
import { type CampaignWebhookDeps, sendCampaignEvent } from '../../gateway/campaigns/campaign-webhooks.js'
import { getAgentRow } from '../../gateway/store/agents.js'
import { cancelPendingContacts } from '../../gateway/store/campaign-contacts.js'
import type { CampaignRow, CampaignStatus } from '../../gateway/store/campaign-schema.js'
import {
  campaignCounts,
  createCampaign,
  databaseTimeZones,
  getCampaign,
  listCampaigns,
  moveCampaign,
  pendingTimeZones,
} from '../../gateway/store/campaigns.js'
import { getOrganizationRow } from '../../gateway/store/organizations.js'
import { findPhoneNumber } from '../../gateway/store/phone-numbers.js'
import type { Database } from '../../gateway/store/schema.js'
import type { ApiState } from '../auth.js'
import { readJsonObject } from '../http/body.js'
import { newRouter } from '../http/router.js'
import { parseOr400 } from '../http/validate.js'
import { campaignView, createCampaignSchema, DEFAULT_RETRY } from './campaign-views.js'

/** Most campaigns one list answers with. */
const MAX_LISTED = 200

/** What the campaign routes need. */
export interface CampaignRouteDeps {
  readonly db: Kysely<Database>
  readonly webhooks: CampaignWebhookDeps
  /** The clock the next window is read by (tests move it). */
  readonly now?: (() => Date) | undefined
}

/** The moves the API offers: from which states, to which, and the webhook it sends. */
const MOVES: Record<string, { from: CampaignStatus[]; to: CampaignStatus; event?: 'campaign.started' | 'campaign.paused' }> = {
  start: { from: ['draft'], to: 'running', event: 'campaign.started' },
  pause: { from: ['running'], to: 'paused', event: 'campaign.paused' },
  resume: { from: ['paused'], to: 'running', event: 'campaign.started' },
  cancel: { from: ['draft', 'running', 'paused'], to: 'canceled' },
}

/** The campaign routes, for the API-key-protected /v1 router. */
export function campaignsRouter(deps: CampaignRouteDeps): Router<ApiState> {
  const { db } = deps
  const r = newRouter<ApiState>()

  r.post('/v1/campaigns', async (ctx) => {
    const body = parseOr400(createCampaignSchema, await readJsonObject(ctx))
    const orgId = ctx.state.organizationId
    const agent = await getAgentRow(db, orgId, body.agent_id)
    if (agent === undefined) throw voxError('invalid_agent_id', `invalid agent id: ${body.agent_id}`)
    const from = normalisePhoneNumber(body.from_phone_number)
    if (from === undefined) throw voxError('invalid_phone_number', 'from_phone_number is not a valid E.164 phone number')
    const assignment = await findPhoneNumber(db, from.e164)
    if (assignment === undefined || assignment.agent_id !== agent.id) {
      throw voxError('phone_number_not_assigned', `from_phone_number ${from.e164} is not assigned to agent ${agent.id}`)
    }
    if (!isKnownTimeZone(body.default_timezone) || !(await databaseTimeZones(db, [body.default_timezone])).has(body.default_timezone)) {
      throw voxError('validation_failed', 'default_timezone is not an IANA time zone name (such as America/New_York)')
    }
    const org = await getOrganizationRow(db, orgId)
    const limit = org?.max_concurrent_sessions ?? null
    if (limit !== null && body.max_concurrency > limit) {
      throw voxError('validation_failed', `max_concurrency ${body.max_concurrency} is above the organization's limit of ${limit}`)
    }
    const row = await createCampaign(db, {
      organizationId: orgId,
      agentId: agent.id,
      name: body.name,
      fromPhoneNumber: from.e164,
      windowDays: [...new Set(body.calling_window.days.map((d) => DAY_NAMES.indexOf(d) + 1))],
      windowStartMinute: body.calling_window.start,
      windowEndMinute: body.calling_window.end,
      defaultTimezone: body.default_timezone,
      retry: { ...DEFAULT_RETRY, ...body.retry },
      maxConcurrency: body.max_concurrency,
      machineDetection: body.machine_detection ?? false,
      lifecycleWebhooks: body.lifecycle_webhooks ?? false,
    })
    ctx.status = 201
    ctx.body = campaignView(row)
  })

  r.get('/v1/campaigns', async (ctx) => {
    ctx.body = { campaigns: (await listCampaigns(db, ctx.state.organizationId, MAX_LISTED)).map(campaignView) }
  })

  r.get('/v1/campaigns/:campaign_id', async (ctx) => {
    const c = await campaignOr404(db, ctx.state.organizationId, ctx.params.campaign_id as string)
    ctx.body = { ...campaignView(c), counts: await campaignCounts(db, c.id) }
  })

  r.get('/v1/campaigns/:campaign_id/progress', async (ctx) => {
    const c = await campaignOr404(db, ctx.state.organizationId, ctx.params.campaign_id as string)
    ctx.body = await progress(deps, c)
  })

  for (const [action, move] of Object.entries(MOVES)) {
    r.post(`/v1/campaigns/:campaign_id/${action}`, async (ctx) => {
      const orgId = ctx.state.organizationId
      const current = await campaignOr404(db, orgId, ctx.params.campaign_id as string)
      const moved = await moveCampaign(db, orgId, current.id, move.from, move.to)
      if (moved === undefined) {
        const now = (await getCampaign(db, orgId, current.id))?.status ?? current.status
        throw voxError('campaign_state', `a ${now} campaign cannot ${action}: only a ${move.from.join(' or ')} one can`)
      }
      // Calls already on the line finish; nobody else is called.
      if (move.to === 'canceled') await cancelPendingContacts(db, moved.id)
      if (move.event !== undefined) await sendCampaignEvent(deps.webhooks, moved, move.event)
      ctx.body = campaignView(moved)
    })
  }
  return r
}

/** The campaign, or 404. */
export async function campaignOr404(db: Kysely<Database>, organizationId: string, id: string): Promise<CampaignRow> {
  const c = await getCampaign(db, organizationId, id)
  if (c === undefined) throw voxError('campaign_not_found')
  return c
}

/** GET progress: the counts the console shows and when the window next opens for someone still to call. */
async function progress(deps: CampaignRouteDeps, c: CampaignRow) {
  const counts = await campaignCounts(deps.db, c.id)
  const now = deps.now?.() ?? new Date()
  const window: CallingWindow = { days: c.window_days, startMinute: c.window_start_minute, endMinute: c.window_end_minute }
  let next: Date | undefined
  for (const zone of await pendingTimeZones(deps.db, c.id, 50)) {
    const opens = nextWindowOpening(window, zone, now)
    if (opens !== undefined && (next === undefined || opens < next)) next = opens
  }
  const d = counts.dispositions
  return {
    campaign_id: c.id,
    status: c.status,
    contacts: counts.total,
    dialled: counts.dialled,
    reached: d.answered ?? 0,
    machines: d.machine ?? 0,
    failed: (d.failed ?? 0) + (d.busy ?? 0) + (d.no_answer ?? 0),
    dnc: d.dnc ?? 0,
    canceled: d.canceled ?? 0,
    in_progress: counts.dialing,
    remaining: counts.pending + counts.dialing,
    attempts: counts.attempts,
    dispositions: counts.dispositions,
    outcomes: counts.outcomes,
    next_window_at: counts.pending === 0 ? null : (next?.toISOString() ?? null),
  }
}
