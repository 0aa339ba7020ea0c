import { timingSafeEqual, createHash } from 'node:crypto'
import type { Middleware } from 'koa'
import { voxError } from '../core/errors.js'
import type { Kysely } from 'kysely'
import type { Database } from '../gateway/store/schema.js'
import { apiKeyIdentity } from '../gateway/store/api-keys.js'
import { getOrganizationRow } from '../gateway/store/organizations.js'

/** Header naming the organization the admin token acts for on /v1 routes (the console's admin sign-in). */
export const ACT_FOR_ORGANIZATION_HEADER = 'x-voxgate-organization'

/** State the auth middleware leaves on `ctx.state` for /v1 routes. */
export interface ApiState {
  organizationId: string
  /** The presented API key's id; null when the admin token acts for the organization. */
  keyId: string | null
}

/** The token of an `Authorization: Bearer <token>` header. */
export function bearer(header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header)
  return m?.[1]
}

/** True when `token` is the configured admin token (never true when none is configured). */
export function isAdminToken(token: string, adminToken: string | undefined): boolean {
  return adminToken !== undefined && sameSecret(token, adminToken)
}

/**
 * Requires `Authorization: Bearer <API_KEY>`; missing or invalid keys get 400 as the SPEC says. The admin token
 * is accepted too when it names the organization it acts for in {@link ACT_FOR_ORGANIZATION_HEADER} (an addition,
 * so an operator can open any organization's console without minting a key).
 */
export function requireApiKey(db: Kysely<Database>, adminToken?: string): Middleware<ApiState> {
  return async (ctx, next) => {
    const key = bearer(ctx.get('authorization') || undefined)
    if (key === undefined) throw voxError('missing_api_key', 'missing bearer token: send Authorization: Bearer <API_KEY>')
    if (isAdminToken(key, adminToken)) {
      const orgId = ctx.get(ACT_FOR_ORGANIZATION_HEADER)
      if (!orgId) throw voxError('invalid_api_key', `the admin token needs the ${ACT_FOR_ORGANIZATION_HEADER} header on /v1 routes`)
      if ((await getOrganizationRow(db, orgId)) === undefined) throw voxError('organization_not_found')
      ctx.state.organizationId = orgId
      ctx.state.keyId = null
      await next()
      return
    }
    const identity = await apiKeyIdentity(db, key)
    if (identity === undefined) throw voxError('invalid_api_key')
    ctx.state.organizationId = identity.organizationId
    ctx.state.keyId = identity.keyId
    await next()
  }
}

/** True when two secrets are equal, compared in constant time whatever their lengths (both sides are hashed). */
export function sameSecret(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest()
  const hb = createHash('sha256').update(b).digest()
  return timingSafeEqual(ha, hb)
}

/** Requires the admin bearer token; when no ADMIN_TOKEN is configured the admin API is off (403). */
export function requireAdminToken(adminToken: string | undefined): Middleware {
  return async (ctx, next) => {
    if (adminToken === undefined) throw voxError('admin_disabled')
    const token = bearer(ctx.get('authorization') || undefined)
    if (token === undefined || !sameSecret(token, adminToken)) {
      ctx.set('WWW-Authenticate', 'Bearer realm="voxgate-admin"')
      throw voxError('admin_unauthorized')
    }
    await next()
  }
}
