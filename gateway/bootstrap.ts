import type { Kysely } from 'kysely'
import type { Database } from './store/schema.js'
import { countOrganizations, createOrganization } from './store/organizations.js'
import { seedTemplates } from './store/agent-templates.js'
import { DEFAULT_TEMPLATE_ID, TEMPLATES } from '../pipeline/config/templates.js'

/** What first start did: the default organization's key, shown once, when one was created. */
export interface BootstrapResult {
  createdOrganization?: { id: string; apiKey: string }
}

/**
 * Seeds the agent templates and, on an empty database, creates the default organization. The two
 * statements race safely across replicas only at first start; a second default org is harmless.
 */
export async function bootstrap(db: Kysely<Database>): Promise<BootstrapResult> {
  await seedTemplates(db, TEMPLATES, DEFAULT_TEMPLATE_ID)
  if ((await countOrganizations(db)) > 0) return {}
  const { organization, apiKey } = await createOrganization(db, { name: 'Default organization' })
  return { createdOrganization: { id: organization.id, apiKey } }
}

/** The once-only message that shows a new default organization's API key. */
export function firstStartMessage(r: NonNullable<BootstrapResult['createdOrganization']>, publicUrl: string): string {
  return [
    '',
    '  voxgate: first start, created the default organization',
    `    organization id: ${r.id}`,
    `    API key:         ${r.apiKey}`,
    '  This key is shown once and stored only as a hash: keep it now.',
    '  More organizations and keys: set ADMIN_TOKEN and call',
    `    POST ${publicUrl}/admin/v1/organizations  or  POST ${publicUrl}/admin/v1/organizations/{id}/api_keys`,
    '',
  ].join('\n')
}
