import { timingSafeEqual, createHash } from 'node:crypto'
import type { Middleware } from 'koa'
import { voxError } from '../core/errors.js'
import type { Kysely } from 'kysely'
import type { Database } from '../gateway/store/schema.js'
import { organizationForApiKey } from '../gateway/store/api-keys.js'

/** State the auth middleware leaves on `ctx.state` for /v1 routes. */
export interface ApiState {
  organizationId: string
}

/** The token of an `Authorization: Bearer <token>` header. */
export function bearer(header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header)
  return m?.[1]
}

/** Requires `Authorization: Bearer <API_KEY>`; missing or invalid keys get 400 as the SPEC says. */
export function requireApiKey(db: Kysely<Database>): Middleware<ApiState> {
  return async (ctx, next) => {
    const key = bearer(ctx.get('authorization') || undefined)
    if (key === undefined) throw voxError('missing_api_key', 'missing bearer token: send Authorization: Bearer <API_KEY>')
    const organizationId = await organizationForApiKey(db, key)
    if (organizationId === undefined) throw voxError('invalid_api_key')
    ctx.state.organizationId = organizationId
    await next()
  }
}

function sameSecret(a: string, b: string): boolean {
  // Hash both sides so the comparison is constant-time whatever the lengths.
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
