import type { Kysely } from 'kysely'
import type { Database } from '../gateway/store/schema.js'
import { countOrganizations, createOrganization } from '../gateway/store/organizations.js'
import { seedTemplates } from '../gateway/store/agent-templates.js'
import { createAgent } from '../gateway/store/agents.js'
import { createAgentLink } from '../gateway/store/agent-links.js'
import {
  DEFAULT_TEMPLATE_ID,
  TEMPLATES,
  findTemplate,
  withAvailableVendors,
  type VendorAvailability,
  validatePipelineConfig,
} from '../pipeline/index.js'
import { agentLinkUrl } from '../api/routes/agent-links.js'

/** What first start made: the default organization's key, its demo agent and the link to talk to it, shown once. */
export interface FirstStart {
  organizationId: string
  apiKey: string
  agentId: string
  linkId: string
  /** Opens the demo page talking to the demo agent; its token is in the URL fragment. */
  linkUrl: string
}

/** What bootstrap did: `firstStart` when it created the default organization. */
export interface BootstrapResult {
  firstStart?: FirstStart
}

/** What first start needs to make an agent that can speak on this machine and a link that reaches it. */
export interface BootstrapOptions {
  vendors: VendorAvailability
  publicUrl: string
}

/** Name of the agent first start creates. */
export const DEMO_AGENT_NAME = 'Demo agent'

/**
 * Seeds the agent templates and, on an empty database, creates the default organization, a demo agent from the
 * default template (with the vendors this gateway has keys for) and a revocable link to talk to it. The
 * statements race safely across replicas only at first start; a second default org is harmless.
 */
export async function bootstrap(db: Kysely<Database>, options: BootstrapOptions): Promise<BootstrapResult> {
  await seedTemplates(db, TEMPLATES, DEFAULT_TEMPLATE_ID)
  if ((await countOrganizations(db)) > 0) return {}
  const { organization, apiKey } = await createOrganization(db, { name: 'Default organization' })
  const template = findTemplate()
  if (template === undefined) throw new Error(`built-in template ${DEFAULT_TEMPLATE_ID} is missing`)
  const checked = validatePipelineConfig(withAvailableVendors(template.config, options.vendors), { allowInsecureLoopback: false })
  if (!checked.ok) throw new Error(`default template does not validate: ${checked.errors.join('; ')}`)
  const agent = await createAgent(db, {
    organizationId: organization.id,
    name: DEMO_AGENT_NAME,
    config: checked.config,
    templateId: template.id,
  })
  const { link, token } = await createAgentLink(db, organization.id, agent.id)
  return {
    firstStart: {
      organizationId: organization.id,
      apiKey,
      agentId: agent.id,
      linkId: link.id,
      linkUrl: agentLinkUrl(options.publicUrl, token),
    },
  }
}

/** The once-only message that shows the new default organization's API key and ends with the demo link. */
export function firstStartMessage(r: FirstStart, publicUrl: string): string {
  return [
    '',
    '  voxgate: first start, created the default organization and a demo agent',
    `    organization id: ${r.organizationId}`,
    `    API key:         ${r.apiKey}`,
    `    demo agent id:   ${r.agentId}`,
    '  The key is shown once and stored only as a hash: keep it now. More organizations and keys: set ADMIN_TOKEN',
    `  and see POST ${publicUrl}/admin/v1/organizations in docs/guides/replicas.md (the admin API).`,
    '  Your own backend next (README, "Your first hour"): npx voxgate login, then npx voxgate init ../my-agent.',
    '  The link below opens a page that talks to the demo agent (type, or speak once an STT key is set). It grants',
    `  sessions with that agent only; revoke it with DELETE ${publicUrl}/v1/agents/${r.agentId}/links/${r.linkId}`,
    '',
    `  Talk to your agent: ${r.linkUrl}`,
    '',
  ].join('\n')
}
