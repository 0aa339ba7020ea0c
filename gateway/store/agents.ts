import type { Kysely } from 'kysely'
import type { AgentRow, Database } from './schema.js'
import { newId, newSecret } from '../../core/ids.js'
import { listPhoneNumbers, type PhoneAssignment } from './phone-numbers.js'

/** An agent as the API returns it. */
export interface Agent {
  id: string
  name: string
  type: string
  config: unknown
  webhook_secret: string
  agent_template_id: string | null
  demo_mode: boolean
  created_at: string
  updated_at: string
  assigned_phone_numbers: PhoneAssignment[]
}

function toAgent(row: AgentRow, phones: PhoneAssignment[]): Agent {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    config: row.config,
    webhook_secret: row.webhook_secret,
    agent_template_id: row.agent_template_id,
    demo_mode: row.demo_mode,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    assigned_phone_numbers: phones,
  }
}

/** Creates an agent with a validated config; the default name is `My Agent <id>`. */
export async function createAgent(
  db: Kysely<Database>,
  input: { organizationId: string; name?: string | undefined; config: unknown; templateId: string | null },
): Promise<Agent> {
  const id = newId('agt')
  const row = await db
    .insertInto('agents')
    .values({
      id,
      organization_id: input.organizationId,
      name: input.name ?? `My Agent ${id}`,
      config: JSON.stringify(input.config),
      webhook_secret: newSecret('whsec'),
      agent_template_id: input.templateId,
      updated_at: new Date(),
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  return toAgent(row, [])
}

/** The agent row if it belongs to the organization; another organization's agent is simply not found. */
export async function getAgentRow(db: Kysely<Database>, organizationId: string, agentId: string): Promise<AgentRow | undefined> {
  return db.selectFrom('agents').selectAll().where('id', '=', agentId).where('organization_id', '=', organizationId).executeTakeFirst()
}

/** One agent with its phone numbers, scoped to the organization. */
export async function getAgent(db: Kysely<Database>, organizationId: string, agentId: string): Promise<Agent | undefined> {
  const row = await getAgentRow(db, organizationId, agentId)
  if (row === undefined) return undefined
  return toAgent(row, await listPhoneNumbers(db, [row.id]).then((m) => m.get(row.id) ?? []))
}

/** All agents of an organization, oldest first, with their phone numbers. */
export async function listAgents(db: Kysely<Database>, organizationId: string): Promise<Agent[]> {
  const rows = await db
    .selectFrom('agents')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  const phones = await listPhoneNumbers(
    db,
    rows.map((r) => r.id),
  )
  return rows.map((r) => toAgent(r, phones.get(r.id) ?? []))
}

/** Applies an update; undefined when the agent is not the organization's. */
export async function updateAgent(
  db: Kysely<Database>,
  organizationId: string,
  agentId: string,
  patch: { name?: string | undefined; config?: unknown; demo_mode?: boolean | undefined },
): Promise<Agent | undefined> {
  const row = await db
    .updateTable('agents')
    .set({
      ...(patch.name !== undefined && { name: patch.name }),
      ...(patch.config !== undefined && { config: JSON.stringify(patch.config) }),
      ...(patch.demo_mode !== undefined && { demo_mode: patch.demo_mode }),
      updated_at: new Date(),
    })
    .where('id', '=', agentId)
    .where('organization_id', '=', organizationId)
    .returningAll()
    .executeTakeFirst()
  if (row === undefined) return undefined
  return toAgent(row, await listPhoneNumbers(db, [row.id]).then((m) => m.get(row.id) ?? []))
}
