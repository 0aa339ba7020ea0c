/**
 * The API's side of the volume limits (gateway/store/organization-limits.ts): a rate check before a route does its
 * work, and the refusal of a creation over a cap, both with the SPEC's error body and a stable code.
 */
import type { Kysely } from 'kysely'
import type { Database } from '../../gateway/store/schema.js'
import { voxError, type VoxgateError } from '../../core/errors.js'
import { takeToken } from '../../gateway/store/rate-limits.js'
import { CAP_NOUNS, type RateLimitedAction } from '../../gateway/store/organization-limits.js'
import type { CapReached } from '../../gateway/store/organization-caps.js'

/** Throws 429 `rate_limited` (with Retry-After) when the organization is over its rate for `action`. */
export type RateLimit = (organizationId: string, action: RateLimitedAction) => Promise<void>

/** The rate check over the store's shared buckets; `clock` (Unix ms) is injectable so tests need not wait. */
export function storeRateLimit(db: Kysely<Database>, clock: () => number = Date.now): RateLimit {
  return async (organizationId, action) => {
    const r = await takeToken(db, { organizationId, action, now: new Date(clock()) })
    if (r.ok) return
    throw voxError(
      'rate_limited',
      `too many ${action} requests for this organization: retry after the time given in Retry-After (the operator sets limits.${action})`,
      // Whole seconds, rounded up (the error handler sends at least 1), so a retry then finds a token.
      { retryAfterSeconds: Math.ceil(r.retryAfterSeconds) },
    )
  }
}

/** The 409 of a creation over a cap, naming the cap and how to raise it. */
export function capError(r: CapReached): VoxgateError {
  const message =
    `this organization has reached its limit of ${r.max} ${CAP_NOUNS[r.capReached]} (limits.${r.capReached}): ` +
    'delete some, or ask the operator to raise it (PATCH /admin/v1/organizations/{id} with limits)'
  // Trunks had a code of their own before the caps became settable; clients may match on it.
  return voxError(r.capReached === 'max_sip_trunks' ? 'sip_trunk_limit' : 'limit_reached', message)
}
