import { type UrlPolicy, frontendConfig, type FrontendConfig, resolveSessionConfig, validateConfigOverride } from '../../pipeline/index.js'
import type { Kysely } from 'kysely'
import type { Database } from '../store/schema.js'
import { voxError } from '../../core/errors.js'
import { getAgentRow } from '../store/agents.js'
import { balanceUsedUp, getOrganizationRow } from '../store/organizations.js'
import { createConversation, getConversation } from '../store/sessions.js'
import { createAuthorizedSession, type SessionOrigin } from '../store/session-keys.js'
import { acquireLease, lockOrganization } from '../store/leases.js'
import { lockLiveAgentLink } from '../store/agent-links.js'
import { configUrlRefusals, type EgressPolicy } from '../webhooks/egress-policy.js'

/** What a transport or the REST API asks for. */
export interface AuthorizeInput {
  organizationId: string
  agentId: string
  /** Absent or null: a new conversation. */
  conversationId?: string | null | undefined
  configOverride?: unknown
  metadata?: Record<string, unknown> | undefined
  origin: SessionOrigin
  /** The agent link authorizing it: checked still unrevoked as the key is issued, and recorded on the session. */
  agentLinkId?: string | undefined
  /** Take a concurrency slot now (carrier calls, outbound calls), in the same transaction. */
  holdLease?: { owner: string; ttlMs: number }
}

/** A granted authorization. */
export interface Authorization {
  clientSessionKey: string
  conversationId: string
  sessionId: string
  expiresAt: Date
  config: FrontendConfig
}

/**
 * The one authorization path (REST authorize_session, the carrier voice hook, outbound calls): checks the
 * agent, the conversation, the override and the balance, then creates the session and its one-time key.
 * Throws registered errors: invalid_agent_id, invalid_conversation_id, validation_failed,
 * insufficient_balance, concurrency_limit.
 */
export async function authorizeSession(
  db: Kysely<Database>,
  input: AuthorizeInput,
  options: {
    webhookPolicy: UrlPolicy
    /** Told when the organization is refused a session (the refusals metric counts it). */
    refused?: ((reason: 'insufficient_balance' | 'concurrency_limit') => void) | undefined
    /** Refuses an override's webhook URLs that point where webhooks may not go (the gateway's egress policy). */
    egress?: EgressPolicy | undefined
  },
): Promise<Authorization> {
  const agent = await getAgentRow(db, input.organizationId, input.agentId)
  if (agent === undefined) throw voxError('invalid_agent_id', `invalid agent id: ${input.agentId}`)

  const policy = options.webhookPolicy
  let override: unknown
  if (input.configOverride !== undefined && input.configOverride !== null) {
    const checked = validateConfigOverride(input.configOverride, policy)
    if (!checked.ok) throw voxError('validation_failed', prefix(checked.errors).join('; '), { details: prefix(checked.errors) })
    const refused = configUrlRefusals(options.egress, checked.config)
    if (refused.length > 0) throw voxError('validation_failed', refused.join('; '), { details: refused })
    override = checked.config
  }
  const effective = resolveSessionConfig(agent.config, override, policy)
  if (!effective.ok) throw voxError('validation_failed', prefix(effective.errors).join('; '), { details: prefix(effective.errors) })
  // A SIP call is a phone call: `clients.carrier` governs it as it does the carrier's.
  const client = input.origin.channel === 'browser' ? 'browser' : 'carrier'
  if (!effective.config.clients[client]) {
    throw voxError('bad_request', `${input.origin.channel} clients are disabled for this agent (config.clients.${client})`)
  }

  if (input.conversationId !== undefined && input.conversationId !== null) {
    const conv = await getConversation(db, input.organizationId, input.conversationId)
    if (conv === undefined || conv.agent_id !== agent.id) {
      throw voxError('invalid_conversation_id', `invalid conversation id: ${input.conversationId}`)
    }
  }

  const org = await getOrganizationRow(db, input.organizationId)
  if (org === undefined) throw voxError('invalid_api_key')
  if (balanceUsedUp(org)) {
    options.refused?.('insufficient_balance')
    throw voxError('insufficient_balance')
  }

  const metadata = { ...(effective.config.metadata ?? {}), ...(input.metadata ?? {}) }
  const granted = await db.transaction().execute(async (tx) => {
    if (input.holdLease) await lockOrganization(tx, input.organizationId)
    if (input.agentLinkId !== undefined && !(await lockLiveAgentLink(tx, input.agentLinkId))) throw voxError('invalid_agent_link')
    const conversationId = input.conversationId ?? (await createConversation(tx, input.organizationId, agent.id))
    const s = await createAuthorizedSession(tx, {
      organizationId: input.organizationId,
      agentId: agent.id,
      conversationId,
      configOverride: override,
      metadata: Object.keys(metadata).length > 0 ? metadata : undefined,
      origin: input.origin,
      agentLinkId: input.agentLinkId,
    })
    if (input.holdLease) {
      const ok = await acquireLease(tx, {
        sessionId: s.sessionId,
        organizationId: input.organizationId,
        leaseOwner: input.holdLease.owner,
        leaseTtlMs: input.holdLease.ttlMs,
      })
      if (!ok) {
        options.refused?.('concurrency_limit')
        throw voxError('concurrency_limit')
      }
    }
    return { ...s, conversationId }
  })
  return {
    clientSessionKey: granted.key,
    conversationId: granted.conversationId,
    sessionId: granted.sessionId,
    expiresAt: granted.expiresAt,
    config: frontendConfig(effective.config),
  }
}

function prefix(errors: string[]): string[] {
  return errors.map((e) => (e.startsWith('config') ? e : `config.${e}`))
}
