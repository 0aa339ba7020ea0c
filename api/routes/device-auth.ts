import type Router from '@koa/router'
import { newRouter } from '../http/router.js'
import type { Context } from 'koa'
import { z } from 'zod'
import type { Kysely } from 'kysely'
import type { Database } from '../../gateway/store/schema.js'
import { voxError } from '../../core/errors.js'
import { apiKeyIdentity } from '../../gateway/store/api-keys.js'
import { getOrganizationRow } from '../../gateway/store/organizations.js'
import {
  createDeviceAuthorization,
  decideDeviceAuthorization,
  redeemDeviceCode,
  type DeviceCodeLimits,
} from '../../gateway/store/device-authorizations.js'
import { bearer, isAdminToken } from '../auth.js'
import { readJsonObject } from '../http/body.js'
import { parseOr400 } from '../http/validate.js'
import type { Log } from '../../core/log.js'
import { storeRateLimit, type RateLimit } from '../http/limits.js'

/** Where the device sign-in routes live. */
export const DEVICE_AUTH_PREFIX = '/v1/cli/device_authorizations'
/** How long a device code lives (the contract's `expires_in`). */
export const DEVICE_CODE_TTL_MS = 10 * 60 * 1000
/** Seconds the CLI waits between polls. */
export const DEVICE_POLL_INTERVAL_S = 1
/** Pending codes allowed per client IP and over all (429 beyond). */
export const DEVICE_CODE_LIMITS: DeviceCodeLimits = { perIp: 100, total: 10_000 }

/** Body of POST /v1/cli/device_authorizations. */
export const deviceStartSchema = z.strictObject({ client_name: z.string().trim().min(1).max(100).optional() })
/** Body of POST /v1/cli/device_authorizations/token. */
export const deviceTokenSchema = z.strictObject({ device_code: z.string().min(1).max(200) })
/** Body of POST /v1/cli/device_authorizations/approve. */
export const deviceApproveSchema = z.strictObject({
  user_code: z.string().min(1).max(20),
  organization_id: z.string().min(1).max(100).optional(),
})
/** Body of POST /v1/cli/device_authorizations/deny. */
export const deviceDenySchema = z.strictObject({ user_code: z.string().min(1).max(20) })

export interface DeviceAuthDeps {
  db: Kysely<Database>
  publicUrl: string
  adminToken: string | undefined
  log: Log
  /** Test hooks: a shorter lifetime, other limits. */
  ttlMs?: number
  limits?: DeviceCodeLimits
  /** The organization's request rates (default: the store's shared buckets on the wall clock). */
  rateLimit?: RateLimit | undefined
}

/** Who approves or denies: the admin, or an organization by its API key. */
type Approver = { admin: true } | { admin: false; organizationId: string }

/**
 * The approver's credential, checked before the body is read (a stranger learns nothing of the body's rules):
 * an organization API key or the admin token; anything else is 401.
 */
async function approverOf(ctx: Context, deps: DeviceAuthDeps): Promise<Approver> {
  const token = bearer(ctx.get('authorization') || undefined)
  if (token === undefined) throw voxError('invalid_credentials', 'send Authorization: Bearer <API key or admin token>')
  if (isAdminToken(token, deps.adminToken)) return { admin: true }
  const identity = await apiKeyIdentity(deps.db, token)
  if (identity === undefined) throw voxError('invalid_credentials')
  return { admin: false, organizationId: identity.organizationId }
}

/**
 * The organization the approver acts for: an organization API key's own, or the admin token's chosen
 * `organization_id`; the admin without an organization is 400.
 */
async function approverOrganization(
  deps: DeviceAuthDeps,
  approver: Approver,
  organizationId: string | undefined,
): Promise<{ id: string; name: string }> {
  let orgId: string
  if (approver.admin) {
    if (organizationId === undefined) throw voxError('organization_required')
    orgId = organizationId
  } else {
    if (organizationId !== undefined && organizationId !== approver.organizationId) {
      throw voxError('bad_request', 'organization_id names another organization than the API key')
    }
    orgId = approver.organizationId
  }
  const row = await getOrganizationRow(deps.db, orgId)
  if (row === undefined) throw voxError('organization_not_found')
  return { id: row.id, name: row.name }
}

/**
 * Device sign-in for `voxgate login` (an addition to the SPEC, after RFC 8628): the CLI asks for a code, the
 * person approves it on the console's /console/device page, the CLI polls and receives a new API key once.
 */
export function deviceAuthRouter(deps: DeviceAuthDeps): Router {
  const { db, log } = deps
  const ttlMs = deps.ttlMs ?? DEVICE_CODE_TTL_MS
  const rateLimit = deps.rateLimit ?? storeRateLimit(db)
  const r = newRouter({ prefix: DEVICE_AUTH_PREFIX })

  r.post('/', async (ctx) => {
    const body = parseOr400(deviceStartSchema, await readJsonObject(ctx))
    const made = await createDeviceAuthorization(db, {
      clientName: body.client_name ?? null,
      clientIp: ctx.ip || null,
      ttlMs,
      limits: deps.limits ?? DEVICE_CODE_LIMITS,
    })
    if (made === 'limit') throw voxError('too_many_device_codes')
    const page = `${deps.publicUrl}/console/device`
    ctx.status = 201
    ctx.set('Cache-Control', 'no-store')
    ctx.body = {
      device_code: made.deviceCode,
      user_code: made.userCode,
      verification_uri: page,
      verification_uri_complete: `${page}?code=${made.userCode}`,
      expires_in: Math.round(ttlMs / 1000),
      interval: DEVICE_POLL_INTERVAL_S,
    }
  })

  r.post('/token', async (ctx) => {
    const body = parseOr400(deviceTokenSchema, await readJsonObject(ctx))
    const result = await redeemDeviceCode(db, body.device_code)
    if (result.kind !== 'approved') throw voxError(result.kind)
    log.info({ organization_id: result.organizationId, key_id: result.keyId }, 'device sign-in redeemed')
    ctx.set('Cache-Control', 'no-store')
    ctx.body = {
      api_key: result.apiKey,
      key_id: result.keyId,
      organization_id: result.organizationId,
      organization_name: result.organizationName,
    }
  })

  r.post('/approve', async (ctx) => {
    const approver = await approverOf(ctx, deps)
    const body = parseOr400(deviceApproveSchema, await readJsonObject(ctx))
    const org = await approverOrganization(deps, approver, body.organization_id)
    // An approval mints the organization an API key: its volume is the organization's, whoever approves.
    await rateLimit(org.id, 'issue_api_key')
    if (!(await decideDeviceAuthorization(db, body.user_code, { approve: true, organizationId: org.id }))) {
      throw voxError('device_code_not_found')
    }
    log.info({ organization_id: org.id }, 'device sign-in approved')
    ctx.body = { organization_id: org.id, organization_name: org.name }
  })

  r.post('/deny', async (ctx) => {
    // The admin denies without choosing an organization; an organization's key names its own.
    const approver = await approverOf(ctx, deps)
    const body = parseOr400(deviceDenySchema, await readJsonObject(ctx))
    if (!approver.admin) await approverOrganization(deps, approver, undefined)
    if (!(await decideDeviceAuthorization(db, body.user_code, { approve: false }))) throw voxError('device_code_not_found')
    ctx.body = { denied: true }
  })

  return r
}
