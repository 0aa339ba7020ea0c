import type { Kysely, Transaction } from 'kysely'
import type { Database, TunnelRow } from './schema.js'
import { lockOrganization } from './leases.js'

/** How an agent's config changes when a tunnel opens and closes (the pipeline's rules, passed in). */
export interface WebhookSwap {
  /** The config pointing at `url`, and the agent step it replaced (null: none); a string is why it cannot. */
  point(config: unknown, url: string): { config: unknown; previousStep: unknown } | string
  /** The config with `previousStep` back, or undefined when the agent no longer points at `url` (changed since). */
  restore(config: unknown, url: string, previousStep: unknown): unknown | undefined
}

/** Outcome of opening a tunnel. */
export type OpenTunnelResult =
  | {
      ok: true
      tunnel: TunnelRow
      previousUrl: string | null
      /** The agent's config as it is now (pointing at the tunnel unless changed meanwhile). */
      config: unknown
      /** A reconnecting CLI took its live tunnel back (nothing was changed but the holder). */
      resumed: boolean
    }
  | { ok: false; reason: 'agent_not_found' | 'tunnel_exists' | 'tunnel_limit' }
  | { ok: false; reason: 'invalid_url'; message: string }

/**
 * Points the organization's agent at a tunnel in one transaction (the organization row locked, so openings
 * racing each other cannot both pass the limit; the agent row locked too).
 *
 * `resume` takes back a tunnel only when it is this agent's (so this organization's) and inside its lease: the
 * new holder renews it and the agent keeps pointing where it points. Anything else, an id that is unknown,
 * another agent's or another organization's, or a tunnel whose lease ran out, opens a new tunnel under `id`
 * (the gateway's random one): a `resume` never names a new tunnel, since the id is the tunnel's public address.
 * A new tunnel is refused while another live tunnel holds the agent, and past `maxTunnels` of the organization;
 * one of this agent whose lease ran out is closed (its previous URL restored) first.
 */
export async function openTunnel(
  db: Kysely<Database>,
  input: {
    /** The id of a new tunnel (random, from the gateway). */
    id: string
    /** The id of a tunnel a reconnecting CLI had. */
    resume?: string | undefined
    organizationId: string
    agentId: string
    /** The new tunnel's webhook URL (a resumed tunnel keeps its own). */
    webhookUrl: string
    holder: string
    holderUrl?: string | undefined
    leaseMs: number
    /** Tunnels the organization may have at once (undefined: no bound). */
    maxTunnels?: number | undefined
  },
  swap: WebhookSwap,
): Promise<OpenTunnelResult> {
  return db.transaction().execute(async (tx) => {
    await lockOrganization(tx, input.organizationId)
    const agent = await tx
      .selectFrom('agents')
      .select(['id', 'config', 'demo_mode'])
      .where('id', '=', input.agentId)
      .where('organization_id', '=', input.organizationId)
      .forUpdate()
      .executeTakeFirst()
    if (agent === undefined) return { ok: false, reason: 'agent_not_found' } as const
    let config = agent.config
    let demoMode = agent.demo_mode
    const old = await tx.selectFrom('tunnels').selectAll().where('agent_id', '=', agent.id).executeTakeFirst()
    const live = old !== undefined && old.lease_expires_at.getTime() > Date.now()
    if (live && old.id === input.resume && old.organization_id === input.organizationId) {
      const tunnel = await tx
        .updateTable('tunnels')
        .set({ holder: input.holder, holder_url: input.holderUrl ?? null, lease_expires_at: new Date(Date.now() + input.leaseMs) })
        .where('id', '=', old.id)
        .returningAll()
        .executeTakeFirstOrThrow()
      return { ok: true, tunnel, previousUrl: webhookUrlOf(old.previous_agent_step), config, resumed: true } as const
    }
    if (old !== undefined) {
      if (live) return { ok: false, reason: 'tunnel_exists' } as const
      const restored = swap.restore(config, old.webhook_url, old.previous_agent_step)
      if (restored !== undefined) {
        config = restored
        demoMode = old.previous_demo_mode
      }
      await tx.deleteFrom('tunnels').where('id', '=', old.id).execute()
    }
    if (input.maxTunnels !== undefined && (await countTunnels(tx, input.organizationId)) >= input.maxTunnels) {
      return { ok: false, reason: 'tunnel_limit' } as const
    }
    const pointed = swap.point(config, input.webhookUrl)
    if (typeof pointed === 'string') return { ok: false, reason: 'invalid_url', message: pointed } as const
    await tx
      .updateTable('agents')
      .set({ config: JSON.stringify(pointed.config), demo_mode: false, updated_at: new Date() })
      .where('id', '=', agent.id)
      .execute()
    const tunnel = await tx
      .insertInto('tunnels')
      .values({
        id: input.id,
        organization_id: input.organizationId,
        agent_id: agent.id,
        webhook_url: input.webhookUrl,
        previous_agent_step: pointed.previousStep === null ? null : JSON.stringify(pointed.previousStep),
        previous_demo_mode: demoMode,
        holder: input.holder,
        holder_url: input.holderUrl ?? null,
        lease_expires_at: new Date(Date.now() + input.leaseMs),
      })
      .returningAll()
      .executeTakeFirstOrThrow()
    return { ok: true, tunnel, previousUrl: webhookUrlOf(pointed.previousStep), config: pointed.config, resumed: false } as const
  })
}

/** The `url` option of an agent step, when it is a webhook step. */
export function webhookUrlOf(step: unknown): string | null {
  const s = step as { use?: unknown; options?: { url?: unknown } } | null
  return s?.use === 'agent.webhook' && typeof s.options?.url === 'string' ? s.options.url : null
}

/** What closing a tunnel did. */
export interface ClosedTunnel {
  tunnel: TunnelRow
  /** True when the previous agent step was put back; false when the agent had been changed meanwhile. */
  restored: boolean
  /** The webhook URL the agent has again (null: no webhook, e.g. the built-in agent step). */
  previousUrl: string | null
}

/**
 * Deletes the tunnel and restores the agent's previous agent step, in one transaction; `onlyIfExpired` (the
 * sweep) leaves a tunnel whose holder renewed its lease meanwhile; `holder` one held elsewhere now. Undefined when there was nothing to close.
 */
export async function closeTunnel(
  db: Kysely<Database>,
  id: string,
  swap: WebhookSwap,
  opts: { onlyIfExpired?: boolean; holder?: string } = {},
): Promise<ClosedTunnel | undefined> {
  return db.transaction().execute(async (tx) => {
    let q = tx.deleteFrom('tunnels').where('id', '=', id)
    if (opts.onlyIfExpired) q = q.where('lease_expires_at', '<', new Date())
    // A replica closing what it holds: not a tunnel another replica took over meanwhile.
    if (opts.holder !== undefined) q = q.where('holder', '=', opts.holder)
    const tunnel = await q.returningAll().executeTakeFirst()
    if (tunnel === undefined) return undefined
    const restored = await restoreAgent(tx, tunnel, swap)
    return { tunnel, restored, previousUrl: webhookUrlOf(tunnel.previous_agent_step) }
  })
}

async function restoreAgent(tx: Transaction<Database>, tunnel: TunnelRow, swap: WebhookSwap): Promise<boolean> {
  const agent = await tx.selectFrom('agents').select(['config']).where('id', '=', tunnel.agent_id).forUpdate().executeTakeFirst()
  if (agent === undefined) return false
  const config = swap.restore(agent.config, tunnel.webhook_url, tunnel.previous_agent_step)
  if (config === undefined) return false
  await tx
    .updateTable('agents')
    .set({ config: JSON.stringify(config), demo_mode: tunnel.previous_demo_mode, updated_at: new Date() })
    .where('id', '=', tunnel.agent_id)
    .execute()
  return true
}

/** Extends the leases of this holder's tunnels; returns the ids still held (a swept one is gone). */
export async function renewTunnels(db: Kysely<Database>, holder: string, ids: string[], leaseMs: number): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const rows = await db
    .updateTable('tunnels')
    .set({ lease_expires_at: new Date(Date.now() + leaseMs) })
    .where('holder', '=', holder)
    .where('id', 'in', ids)
    .returning('id')
    .execute()
  return new Set(rows.map((r) => r.id))
}

/** Ids of tunnels whose holder stopped renewing (crashed or cut off). */
export async function expiredTunnelIds(db: Kysely<Database>): Promise<string[]> {
  const rows = await db.selectFrom('tunnels').select('id').where('lease_expires_at', '<', new Date()).limit(100).execute()
  return rows.map((r) => r.id)
}

/** A tunnel row by id (the relay checks that it is live before waiting on another replica). */
export async function getTunnel(db: Kysely<Database>, id: string): Promise<TunnelRow | undefined> {
  return db.selectFrom('tunnels').selectAll().where('id', '=', id).executeTakeFirst()
}

/** How many tunnels an organization has (live, or left to their lease by a CLI that dropped): the bound counts them all. */
export async function countTunnels(db: Kysely<Database>, organizationId: string): Promise<number> {
  const r = await db
    .selectFrom('tunnels')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow()
  return Number(r.n)
}
