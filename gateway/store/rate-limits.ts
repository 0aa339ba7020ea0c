/**
 * Token buckets per organization and action, in the database so every replica draws from the same one. A check is
 * one INSERT ... ON CONFLICT DO UPDATE: Postgres locks the bucket's row for it, so two checks at once (on one
 * replica or two) are ordered and neither reads a count the other is about to change.
 */
import { sql, type Kysely } from 'kysely'
import type { Database } from './schema.js'
import { DEFAULT_RATES, rateKey, type RateLimitedAction } from './organization-limits.js'

/** A check's outcome: passed, or refused with how long until a token is back (seconds, not rounded). */
export type RateCheck = { ok: true } | { ok: false; retryAfterSeconds: number }

/**
 * Takes one token from the organization's bucket for `action`, refilled since its last check at the
 * organization's rate (its override, else the default) and holding at most its burst; a bucket checked for the
 * first time starts full. `now` is the caller's clock (injectable for tests); replicas keep theirs in step (NTP),
 * and a bucket never refills backwards when one lags. An organization that does not exist is not limited here.
 */
export async function takeToken(
  db: Kysely<Database>,
  input: { organizationId: string; action: RateLimitedAction; now: Date },
): Promise<RateCheck> {
  const { organizationId, action } = input
  const d = DEFAULT_RATES[action]
  const elapsed = sql`greatest(0, extract(epoch from (excluded.refilled_at - rate_limits.refilled_at)))::float8`
  const refilled = sql`least(excluded.burst, rate_limits.tokens + ${elapsed} * excluded.per_second)`
  const result = await sql<{ tokens: number; per_second: number; granted: boolean }>`
    with o as (
      select coalesce((limits->>${rateKey(action, 'per_second')})::float8, ${d.per_second}::float8) as per_second,
             coalesce((limits->>${rateKey(action, 'burst')})::float8, ${d.burst}::float8) as burst
      from organizations where id = ${organizationId}
    )
    insert into rate_limits (organization_id, action, tokens, refilled_at, per_second, burst, granted)
    select ${organizationId}, ${action}, o.burst - 1, ${input.now.toISOString()}::timestamptz, o.per_second, o.burst, true from o
    on conflict (organization_id, action) do update set
      tokens = case when ${refilled} >= 1 then ${refilled} - 1 else ${refilled} end,
      refilled_at = greatest(rate_limits.refilled_at, excluded.refilled_at),
      per_second = excluded.per_second,
      burst = excluded.burst,
      granted = ${refilled} >= 1
    returning tokens, per_second, granted
  `.execute(db)
  const row = result.rows[0]
  if (row === undefined || row.granted) return { ok: true }
  return { ok: false, retryAfterSeconds: (1 - Number(row.tokens)) / Number(row.per_second) }
}
