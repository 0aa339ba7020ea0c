import { carrierSchema, createOrgSchema, patchOrgSchema } from '../routes/admin.js'
import type { Operation } from './operation.js'

const ADMIN = [400, 401, 403, 404]

/** The admin API (`/admin/v1`, ADMIN_TOKEN): organizations, their API keys and carrier credentials. */
export const ADMIN_OPERATIONS: Operation[] = [
  {
    method: 'post',
    path: '/admin/v1/organizations',
    tag: 'admin',
    summary: 'Create an organization (its API key is shown once)',
    auth: 'admin',
    body: createOrgSchema,
    ok: {
      status: 201,
      description: '`{ id, name, api_key, balance, max_concurrent_sessions, recording_enabled, outbound_calls_per_second, limits }`',
    },
    errors: ADMIN,
  },
  {
    method: 'get',
    path: '/admin/v1/organizations/:id',
    tag: 'admin',
    summary: 'Read an organization',
    auth: 'admin',
    ok: { status: 200, description: 'the organization' },
    errors: ADMIN,
  },
  {
    method: 'patch',
    path: '/admin/v1/organizations/:id',
    tag: 'admin',
    summary: 'Change an organization (`limits`: request rates and caps, each null back to the default; see docs/limits.md)',
    auth: 'admin',
    body: patchOrgSchema,
    ok: { status: 200, description: 'the organization' },
    errors: ADMIN,
  },
  {
    method: 'post',
    path: '/admin/v1/organizations/:id/api_keys',
    tag: 'admin',
    summary: 'Issue another API key',
    auth: 'admin',
    ok: { status: 201, description: '`{ api_key }`' },
    errors: ADMIN,
  },
  {
    method: 'get',
    path: '/admin/v1/organizations',
    tag: 'admin',
    summary: 'List organizations (an addition: the console admin sign-in picks one)',
    auth: 'admin',
    ok: { status: 200, description: '`{ organizations: [organization] }`' },
    errors: ADMIN,
  },
  {
    method: 'put',
    path: '/admin/v1/organizations/:id/carrier',
    tag: 'admin',
    summary: "Store the organization's carrier credentials (the token is never returned)",
    auth: 'admin',
    body: carrierSchema,
    ok: { status: 200, description: 'stored' },
    errors: ADMIN,
  },
]
