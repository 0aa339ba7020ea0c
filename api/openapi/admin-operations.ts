import { carrierSchema, createOrgSchema, patchOrgSchema } from '../routes/admin.js'
import { reserveNumberSchema } from '../routes/admin-phone-numbers.js'
import type { Operation } from './operation.js'

const ADMIN = [400, 401, 403, 404]

/** The admin API (`/admin/v1`, ADMIN_TOKEN): organizations, their API keys, carrier credentials and phone numbers. */
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
    summary: 'Change an organization (`limits`: request rates and caps, each null back to the default; see docs/reference/limits.md)',
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
  {
    method: 'get',
    path: '/admin/v1/organizations/:id/phone_numbers',
    tag: 'admin',
    summary:
      "The organization's numbers: those reserved for it and those its agents hold (`reserved_at` null: claimed through its carrier account)",
    auth: 'admin',
    ok: { status: 200, description: '`{ phone_numbers: [{ phone_number, reserved_at, agent_id, assigned_at }] }`' },
    errors: ADMIN,
  },
  {
    method: 'put',
    path: '/admin/v1/organizations/:id/phone_numbers/:phone_number',
    tag: 'admin',
    summary:
      'Reserve a number for the organization: its agents may then claim it (POST /v1/agents/{agent_id}/phone_numbers). ' +
      'The way to give out numbers on a SIP trunk or on no carrier account the gateway can ask. 409 when another ' +
      'organization has it, unless `move: true` (its reservation and assignment end)',
    auth: 'admin',
    body: reserveNumberSchema,
    ok: { status: 201, description: 'reserved (200: it already was); `{ phone_number, reserved_at, agent_id, assigned_at }`' },
    errors: [...ADMIN, 409],
  },
  {
    method: 'delete',
    path: '/admin/v1/organizations/:id/phone_numbers/:phone_number',
    tag: 'admin',
    summary: "Release a reserved number: the reservation and the organization's assignment of it end",
    auth: 'admin',
    ok: { status: 204, description: 'released' },
    errors: ADMIN,
  },
]
