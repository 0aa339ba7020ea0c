import type Router from '@koa/router'
import { newRouter } from '../http/router.js'
import { z } from 'zod'
import type { Kysely } from 'kysely'
import type { Database } from '../../gateway/store/schema.js'
import { voxError } from '../../core/errors.js'
import {
  createOrganization,
  getOrganizationRow,
  listOrganizations,
  setCarrierCredentials,
  toOrganization,
  updateOrganization,
} from '../../gateway/store/organizations.js'
import { createApiKey } from '../../gateway/store/api-keys.js'
import { requireAdminToken } from '../auth.js'
import { readJsonObject } from '../http/body.js'
import { parseOr400 } from '../http/validate.js'
import type { Log } from '../../core/log.js'
import { adminPhoneNumberRoutes } from './admin-phone-numbers.js'
import { CAP_NAMES, RATE_LIMITED_ACTIONS, type CapName, type RateLimitedAction } from '../../gateway/store/organization-limits.js'

/** One rate's change: omitted keeps, null goes back to the default. */
const rateSchema = z.strictObject({
  per_second: z.number().positive().max(10_000).nullable().optional(),
  burst: z.number().int().min(1).max(100_000).nullable().optional(),
})
const rateField = rateSchema.nullable().optional()
const capField = z.number().int().min(0).max(1_000_000).nullable().optional()
/**
 * `limits` of the create and patch bodies (an addition): request rates and caps per organization, each key omitted
 * keeps, null goes back to the default. Nested, not flat fields, so the organization's top level stays the SPEC's
 * and the volume limits read as one group (see docs/reference/limits.md).
 */
export const limitsSchema = z.strictObject({
  ...(Object.fromEntries(RATE_LIMITED_ACTIONS.map((a) => [a, rateField])) as Record<RateLimitedAction, typeof rateField>),
  ...(Object.fromEntries(CAP_NAMES.map((c) => [c, capField])) as Record<CapName, typeof capField>),
})

const orgFields = {
  balance: z.number().finite().nullable().optional(),
  max_concurrent_sessions: z.number().int().min(0).max(100_000).nullable().optional(),
  recording_enabled: z.boolean().optional(),
  // An addition to the SPEC: the carrier account's outbound call rate (null: the default, 1 per second).
  outbound_calls_per_second: z.number().positive().max(1000).nullable().optional(),
  limits: limitsSchema.optional(),
}
/** Body of POST /admin/v1/organizations (also the API reference's schema). */
export const createOrgSchema = z.strictObject({ name: z.string().trim().min(1).max(200), ...orgFields })
/** Body of PATCH /admin/v1/organizations/{id}. */
export const patchOrgSchema = z.strictObject({ name: z.string().trim().min(1).max(200).optional(), ...orgFields })
/** Body of PUT /admin/v1/organizations/{id}/carrier. */
export const carrierSchema = z.strictObject({
  account_sid: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -'),
  auth_token: z.string().min(8).max(256),
  api_base_url: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .optional(),
})

/** The operator API under /admin/v1 (bearer ADMIN_TOKEN); its phone number routes are in admin-phone-numbers.ts. */
export function adminRouter(deps: { db: Kysely<Database>; adminToken: string | undefined; log: Log }): Router {
  const { db, log } = deps
  const r = newRouter({ prefix: '/admin/v1' })
  r.use(requireAdminToken(deps.adminToken))

  r.post('/organizations', async (ctx) => {
    const body = parseOr400(createOrgSchema, await readJsonObject(ctx))
    const { organization, apiKey } = await createOrganization(db, body)
    log.info({ organization_id: organization.id }, 'organization created')
    ctx.status = 201
    ctx.body = {
      id: organization.id,
      name: organization.name,
      api_key: apiKey,
      balance: organization.balance,
      max_concurrent_sessions: organization.max_concurrent_sessions,
      recording_enabled: organization.recording_enabled,
      outbound_calls_per_second: organization.outbound_calls_per_second,
      limits: organization.limits,
    }
  })

  r.get('/organizations', async (ctx) => {
    ctx.body = { organizations: await listOrganizations(db) }
  })

  r.get('/organizations/:id', async (ctx) => {
    const row = await getOrganizationRow(db, ctx.params.id as string)
    if (row === undefined) throw voxError('organization_not_found')
    ctx.body = toOrganization(row)
  })

  r.patch('/organizations/:id', async (ctx) => {
    const body = parseOr400(patchOrgSchema, await readJsonObject(ctx))
    const org = await updateOrganization(db, ctx.params.id as string, body)
    if (org === undefined) throw voxError('organization_not_found')
    ctx.body = org
  })

  r.post('/organizations/:id/api_keys', async (ctx) => {
    const row = await getOrganizationRow(db, ctx.params.id as string)
    if (row === undefined) throw voxError('organization_not_found')
    ctx.status = 201
    ctx.body = { api_key: await createApiKey(db, row.id) }
  })

  r.put('/organizations/:id/carrier', async (ctx) => {
    const body = parseOr400(carrierSchema, await readJsonObject(ctx))
    const apiBaseUrl = body.api_base_url?.replace(/\/+$/, '')
    const ok = await setCarrierCredentials(db, ctx.params.id as string, {
      accountSid: body.account_sid,
      authToken: body.auth_token,
      apiBaseUrl,
    })
    if (!ok) throw voxError('organization_not_found')
    log.info({ organization_id: ctx.params.id, account_sid: body.account_sid }, 'carrier credentials stored')
    ctx.body = { account_sid: body.account_sid, api_base_url: apiBaseUrl ?? null, auth_token_set: true }
  })

  adminPhoneNumberRoutes(r, { db, log })

  return r
}
