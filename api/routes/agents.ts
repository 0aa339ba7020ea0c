import {
  type UrlPolicy,
  validatePipelineConfig,
  withAvailableVendors,
  withWebhookUrl,
  type VendorAvailability,
} from '../../pipeline/index.js'
import type Router from '@koa/router'
import { newRouter } from '../http/router.js'
import { z } from 'zod'
import type { Kysely } from 'kysely'
import type { Database } from '../../gateway/store/schema.js'
import { voxError } from '../../core/errors.js'
import { createAgent, getAgent, getAgentRow, listAgents, updateAgent, type Agent } from '../../gateway/store/agents.js'
import { getTemplate } from '../../gateway/store/agent-templates.js'
import type { ApiState } from '../auth.js'
import { readJsonObject } from '../http/body.js'
import { parseOr400 } from '../http/validate.js'
import { configUrlRefusals, type EgressPolicy } from '../../gateway/webhooks/egress-policy.js'
import { capError, storeRateLimit, type RateLimit } from '../http/limits.js'
import { createWithinCap, isCapReached } from '../../gateway/store/organization-caps.js'

/** Body of POST /v1/agents (also the API reference's schema). */
export const createAgentSchema = z.strictObject({
  template_id: z.string().min(1).max(200).optional(),
  name: z.string().trim().min(1).max(200).optional(),
})
/** Body of POST /v1/agents/{agent_id}; `config` is checked by the pipeline's own schema. */
export const updateAgentSchema = z.strictObject({
  webhook_url: z.string().min(1).max(2000).optional(),
  name: z.string().trim().min(1).max(200).optional(),
  config: z.unknown().optional(),
})
function listShape(a: Agent) {
  return {
    id: a.id,
    name: a.name,
    type: a.type,
    agent_template_id: a.agent_template_id,
    created_at: a.created_at,
    updated_at: a.updated_at,
    assigned_phone_numbers: a.assigned_phone_numbers,
  }
}

/** Validates a pipeline config or throws 400 with every problem, each naming its field. */
export function validConfigOr400(config: unknown, policy: UrlPolicy, egress?: EgressPolicy): unknown {
  const r = validatePipelineConfig(config, policy)
  if (!r.ok) throw voxError('validation_failed', r.errors.join('; '), { details: r.errors })
  const refused = configUrlRefusals(egress, r.config)
  if (refused.length > 0) throw voxError('validation_failed', refused.join('; '), { details: refused })
  return r.config
}

/** /v1/agents: list, create from template, get, update (phone numbers: agent-phone-numbers.ts). */
export function agentsRouter(deps: {
  db: Kysely<Database>
  vendors: VendorAvailability
  webhookPolicy: UrlPolicy
  egress?: EgressPolicy | undefined
  /** The organization's request rates (default: the store's shared buckets on the wall clock). */
  rateLimit?: RateLimit | undefined
}): Router<ApiState> {
  const { db } = deps
  const rateLimit = deps.rateLimit ?? storeRateLimit(db)
  const r = newRouter<ApiState>()

  r.get('/v1/agents', async (ctx) => {
    ctx.body = { agents: (await listAgents(db, ctx.state.organizationId)).map(listShape) }
  })

  r.post('/v1/agents', async (ctx) => {
    await rateLimit(ctx.state.organizationId, 'create_agent')
    const body = parseOr400(createAgentSchema, await readJsonObject(ctx))
    const template = await getTemplate(db, body.template_id)
    if (template === undefined) throw voxError('template_not_found', `agent template ${body.template_id} not found`)
    const config = validConfigOr400(withAvailableVendors(template.config as never, deps.vendors), deps.webhookPolicy, deps.egress)
    const agent = await createWithinCap(db, ctx.state.organizationId, 'max_agents', (tx) =>
      createAgent(tx, { organizationId: ctx.state.organizationId, name: body.name, config, templateId: template.id }),
    )
    if (isCapReached(agent)) throw capError(agent)
    ctx.status = 201
    ctx.body = agent
  })

  r.get('/v1/agents/:agent_id', async (ctx) => {
    const agent = await getAgent(db, ctx.state.organizationId, ctx.params.agent_id as string)
    if (agent === undefined) throw voxError('agent_not_found')
    ctx.body = agent
  })

  r.post('/v1/agents/:agent_id', async (ctx) => {
    const body = parseOr400(updateAgentSchema, await readJsonObject(ctx))
    const row = await getAgentRow(db, ctx.state.organizationId, ctx.params.agent_id as string)
    if (row === undefined) throw voxError('agent_not_found')
    let config: unknown = body.config === undefined ? undefined : validConfigOr400(body.config, deps.webhookPolicy, deps.egress)
    let demoMode: boolean | undefined
    if (body.webhook_url !== undefined) {
      const base = (config ?? row.config) as never
      config = validConfigOr400(withWebhookUrl(base, body.webhook_url), deps.webhookPolicy, deps.egress)
      demoMode = false
    }
    const agent = await updateAgent(db, ctx.state.organizationId, row.id, { name: body.name, config, demo_mode: demoMode })
    if (agent === undefined) throw voxError('agent_not_found')
    ctx.body = agent
  })

  return r
}
