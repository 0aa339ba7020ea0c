import type Router from '@koa/router'
import { newRouter } from '../http/router.js'
import { z } from 'zod'
import { voxError } from '../../core/errors.js'
import { getAgentRow } from '../../gateway/store/agents.js'
import { agentLinkGrant, createAgentLink, listAgentLinks, revokeAgentLink } from '../../gateway/store/agent-links.js'
import { bearer, type ApiState } from '../auth.js'
import { readJsonObject } from '../http/body.js'
import { parseOr400 } from '../http/validate.js'
import { authorizeBrowserSession, type BrowserAuthorizeDeps } from '../../gateway/admission/browser-session.js'
import { authorizationBody } from './sessions.js'
import { capError, storeRateLimit, type RateLimit } from '../http/limits.js'
import { createWithinCap, isCapReached } from '../../gateway/store/organization-caps.js'

/** The URL a link opens: the demo page with the token in the fragment (never sent in requests or Referer). */
export function agentLinkUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/#link=${token}`
}

/** What a link may ask for: continuing a conversation of its agent, nothing that changes the agent's config. */
export const linkAuthorizeSchema = z.strictObject({
  conversation_id: z.string().min(1).max(200).nullable().optional(),
  sdk_version: z.string().max(100).optional(),
})

/** Body of POST /v1/agents/{agent_id}/links: nothing (yet). */
export const createLinkSchema = z.strictObject({})

/** What the agent-link routes need: a browser session's admission, and where links point. */
interface AgentLinkDeps extends BrowserAuthorizeDeps {
  publicUrl: string
  /** The organization's request rates (default: the store's shared buckets on the wall clock). */
  rateLimit?: RateLimit | undefined
}

/** /v1/agents/{agent_id}/links: create, list and revoke an agent's links (behind the API key). */
export function agentLinksRouter(deps: AgentLinkDeps): Router<ApiState> {
  const { db } = deps
  const rateLimit = deps.rateLimit ?? storeRateLimit(db)
  const r = newRouter<ApiState>()

  const agentOr404 = async (organizationId: string, agentId: string) => {
    const agent = await getAgentRow(db, organizationId, agentId)
    if (agent === undefined) throw voxError('agent_not_found')
    return agent
  }

  r.post('/v1/agents/:agent_id/links', async (ctx) => {
    await rateLimit(ctx.state.organizationId, 'create_agent_link')
    parseOr400(createLinkSchema, await readJsonObject(ctx))
    const agent = await agentOr404(ctx.state.organizationId, ctx.params.agent_id as string)
    const made = await createWithinCap(db, ctx.state.organizationId, 'max_agent_links', (tx) =>
      createAgentLink(tx, ctx.state.organizationId, agent.id),
    )
    if (isCapReached(made)) throw capError(made)
    const { link, token } = made
    ctx.status = 201
    ctx.body = { ...link, url: agentLinkUrl(deps.publicUrl, token) }
  })

  r.get('/v1/agents/:agent_id/links', async (ctx) => {
    const agent = await agentOr404(ctx.state.organizationId, ctx.params.agent_id as string)
    ctx.body = { links: await listAgentLinks(db, ctx.state.organizationId, agent.id) }
  })

  r.delete('/v1/agents/:agent_id/links/:link_id', async (ctx) => {
    const agent = await agentOr404(ctx.state.organizationId, ctx.params.agent_id as string)
    const link = await revokeAgentLink(db, ctx.state.organizationId, agent.id, ctx.params.link_id as string)
    if (link === undefined) throw voxError('agent_link_not_found')
    ctx.body = link
  })

  return r
}

/**
 * POST /v1/agent_links/authorize_session, authorized by `Authorization: Bearer <link token>` instead of an API
 * key: a browser session with the link's agent, as authorize_session would give, without config or metadata.
 */
export function agentLinkSessionsRouter(deps: AgentLinkDeps): Router {
  const rateLimit = deps.rateLimit ?? storeRateLimit(deps.db)
  const r = newRouter()
  r.post('/v1/agent_links/authorize_session', async (ctx) => {
    const token = bearer(ctx.get('authorization') || undefined)
    if (token === undefined) throw voxError('missing_api_key', 'missing bearer token: send Authorization: Bearer <link token>')
    const grant = await agentLinkGrant(deps.db, token)
    if (grant === undefined) throw voxError('invalid_agent_link')
    // The link's organization pays: links are public, so a flood through one of them is that organization's to bound.
    await rateLimit(grant.organizationId, 'agent_link_session')
    const body = parseOr400(linkAuthorizeSchema, await readJsonObject(ctx))
    ctx.body = authorizationBody(
      await authorizeBrowserSession(deps, {
        organizationId: grant.organizationId,
        agentId: grant.agentId,
        conversationId: body.conversation_id,
        agentLinkId: grant.linkId,
      }),
    )
  })
  return r
}
