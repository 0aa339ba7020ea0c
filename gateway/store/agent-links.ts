/**
 * Agent links: a link token authorizes browser sessions with one agent and nothing else (no REST API, no
 * config override). Only the token's hash is stored; a revoked link authorizes nothing more, and the session keys
 * it issued that never connected stop working.
 */
import { sql, type Kysely, type Transaction } from 'kysely'
import type { AgentLinkRow, Database } from './schema.js'
import { hashToken, newId, newSecret } from '../../core/ids.js'
import { endUnusedLinkKeys } from './session-keys.js'

/** An agent link as the API lists it (never with its token). */
export interface AgentLink {
  id: string
  agent_id: string
  created_at: string
  revoked_at: string | null
}

/** Prefix of link tokens, so a leaked one is recognisable (and never mistaken for an API key). */
export const AGENT_LINK_TOKEN_PREFIX = 'vxl'

function toLink(row: AgentLinkRow): AgentLink {
  return {
    id: row.id,
    agent_id: row.agent_id,
    created_at: row.created_at.toISOString(),
    revoked_at: row.revoked_at?.toISOString() ?? null,
  }
}

/** Creates a link for an agent the caller has checked belongs to the organization; the token is returned once. */
export async function createAgentLink(
  db: Kysely<Database>,
  organizationId: string,
  agentId: string,
): Promise<{ link: AgentLink; token: string }> {
  const token = newSecret(AGENT_LINK_TOKEN_PREFIX)
  const row = await db
    .insertInto('agent_links')
    .values({ id: newId('lnk'), organization_id: organizationId, agent_id: agentId, token_hash: hashToken(token) })
    .returningAll()
    .executeTakeFirstOrThrow()
  return { link: toLink(row), token }
}

/** The agent's links, newest first, revoked ones included. */
export async function listAgentLinks(db: Kysely<Database>, organizationId: string, agentId: string): Promise<AgentLink[]> {
  const rows = await db
    .selectFrom('agent_links')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('agent_id', '=', agentId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute()
  return rows.map(toLink)
}

/**
 * Revokes a link and, in the same transaction, ends the keys it issued that never connected (sessions they started
 * go on); undefined when the organization's agent has no such link. Revoking twice keeps the first time.
 */
export async function revokeAgentLink(
  db: Kysely<Database>,
  organizationId: string,
  agentId: string,
  linkId: string,
): Promise<AgentLink | undefined> {
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable('agent_links')
      .set({ revoked_at: sql<Date>`coalesce(revoked_at, now())` })
      .where('id', '=', linkId)
      .where('organization_id', '=', organizationId)
      .where('agent_id', '=', agentId)
      .returningAll()
      .executeTakeFirst()
    if (row === undefined) return undefined
    await endUnusedLinkKeys(tx, row.id)
    return toLink(row)
  })
}

/**
 * True when the link is still unrevoked, read with a share lock inside the transaction that issues a key: a
 * revocation committed first is seen, and one that comes later waits for the key and then ends it too.
 */
export async function lockLiveAgentLink(tx: Transaction<Database>, linkId: string): Promise<boolean> {
  const row = await tx
    .selectFrom('agent_links')
    .select('id')
    .where('id', '=', linkId)
    .where('revoked_at', 'is', null)
    .forShare()
    .executeTakeFirst()
  return row !== undefined
}

/** What a live (unrevoked) link token grants: sessions with one agent of one organization. */
export async function agentLinkGrant(
  db: Kysely<Database>,
  token: string,
): Promise<{ linkId: string; organizationId: string; agentId: string } | undefined> {
  if (!token.startsWith(`${AGENT_LINK_TOKEN_PREFIX}_`)) return undefined
  const row = await db
    .selectFrom('agent_links')
    .select(['id', 'organization_id', 'agent_id'])
    .where('token_hash', '=', hashToken(token))
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return row === undefined ? undefined : { linkId: row.id, organizationId: row.organization_id, agentId: row.agent_id }
}
