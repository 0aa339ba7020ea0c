import { deviceApproveSchema, deviceDenySchema, deviceStartSchema, deviceTokenSchema } from '../routes/device-auth.js'
import type { Operation } from './operation.js'

/** The CLI's device sign-in and what an API key says about itself. */
export const ACCOUNT_OPERATIONS: Operation[] = [
  {
    method: 'post',
    path: '/v1/cli/device_authorizations',
    tag: 'device sign-in',
    summary: 'Start a device sign-in for `voxgate login` (an addition): a device code to poll with and a user code to approve',
    auth: 'none',
    body: deviceStartSchema,
    ok: {
      status: 201,
      description: '`{ device_code, user_code, verification_uri, verification_uri_complete, expires_in, interval }`',
    },
    errors: [400, 429],
  },
  {
    method: 'post',
    path: '/v1/cli/device_authorizations/token',
    tag: 'device sign-in',
    summary:
      'Poll a device code: 400 `authorization_pending`, `expired_token`, `access_denied` or `invalid_grant`; once approved, a new API key (exactly once)',
    auth: 'none',
    body: deviceTokenSchema,
    ok: { status: 200, description: '`{ api_key, key_id, organization_id, organization_name }`' },
    errors: [400],
  },
  {
    method: 'post',
    path: '/v1/cli/device_authorizations/approve',
    tag: 'device sign-in',
    summary: "Approve a user code for the API key's organization, or with the admin token for `organization_id`",
    auth: 'api_key_or_admin',
    body: deviceApproveSchema,
    ok: { status: 200, description: '`{ organization_id, organization_name }`' },
    errors: [400, 401, 404, 429],
  },
  {
    method: 'post',
    path: '/v1/cli/device_authorizations/deny',
    tag: 'device sign-in',
    summary: 'Deny a user code: the polling CLI hears `access_denied`',
    auth: 'api_key_or_admin',
    body: deviceDenySchema,
    ok: { status: 200, description: '`{ denied: true }`' },
    errors: [400, 401, 404],
  },
  {
    method: 'get',
    path: '/v1/whoami',
    tag: 'account',
    summary: 'The organization and key id the presented key stands for (an addition)',
    auth: 'api_key',
    ok: { status: 200, description: '`{ organization_id, organization_name, key_id }`' },
    errors: [400],
  },
  {
    method: 'delete',
    path: '/v1/api_keys/current',
    tag: 'account',
    summary: 'Revoke the presented API key (an addition: `voxgate logout`)',
    auth: 'api_key',
    ok: { status: 204, description: 'revoked' },
    errors: [400],
  },
]
