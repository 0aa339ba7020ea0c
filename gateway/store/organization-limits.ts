/**
 * Limits on volume per organization (an addition to the SPEC, after a penetration test): request rates of the routes
 * that create things, and caps on how many agents, numbers, trunks and links an organization keeps. Each has a
 * default; the operator overrides them per organization (PATCH /admin/v1/organizations/{id} `limits`).
 *
 * Overrides are stored flat (`authorize_session.per_second`, `max_agents`) in `organizations.limits`, so a PATCH
 * merges key by key in one statement and a new limit needs no migration; the API shows them nested and filled in.
 */

/** Routes with a request rate per organization, each a token bucket of its own. */
export const RATE_LIMITED_ACTIONS = [
  'authorize_session',
  'agent_link_session',
  'create_agent',
  'create_agent_link',
  'assign_phone_number',
  'create_sip_trunk',
  'issue_api_key',
] as const

/** A route with a request rate. */
export type RateLimitedAction = (typeof RATE_LIMITED_ACTIONS)[number]

/** A token bucket's settings: refilled at `per_second`, holding at most `burst` (requests at once after a pause). */
export interface Rate {
  per_second: number
  burst: number
}

/**
 * Default rates. Sized so a busy contact centre never meets them in normal use and a runaway script or an attacker
 * is slowed long before the database or memory is: authorize_session at 20 a second is 72,000 sessions an hour, 400
 * times the default of 50 concurrent sessions turning over every 3 minutes; the burst of 100 covers a shift or a
 * campaign starting at once. Provisioning (agents, numbers, links) runs in batches from scripts: bursts of 50-100
 * and a steady 2-5 a second import a thousand in minutes. A trunk is set up by hand; an API key is minted by a
 * person signing in (`voxgate login`), so one every 10 seconds after a burst of 10 is plenty.
 */
export const DEFAULT_RATES: Readonly<Record<RateLimitedAction, Readonly<Rate>>> = {
  authorize_session: { per_second: 20, burst: 100 },
  // Agent links open a demo page anyone holding the URL may load: lower than the API key's route.
  agent_link_session: { per_second: 5, burst: 50 },
  create_agent: { per_second: 2, burst: 50 },
  create_agent_link: { per_second: 2, burst: 50 },
  assign_phone_number: { per_second: 5, burst: 100 },
  create_sip_trunk: { per_second: 1, burst: 20 },
  issue_api_key: { per_second: 0.1, burst: 10 },
}

/** Counted things an organization may keep at most so many of. */
export const CAP_NAMES = ['max_agents', 'max_phone_numbers', 'max_sip_trunks', 'max_agent_links'] as const

/** A cap's name, as the API shows it. */
export type CapName = (typeof CAP_NAMES)[number]

/**
 * Default caps: far above what one organization runs (a large contact centre has tens of agents and numbers) and
 * low enough that the lists the console and the API load whole stay small. Trunks keep their earlier fixed 20.
 * Agent links count those not revoked.
 */
export const DEFAULT_CAPS: Readonly<Record<CapName, number>> = {
  max_agents: 1000,
  max_phone_numbers: 1000,
  max_sip_trunks: 20,
  max_agent_links: 1000,
}

/** What a cap counts, in words, for the refusal's message. */
export const CAP_NOUNS: Readonly<Record<CapName, string>> = {
  max_agents: 'agents',
  max_phone_numbers: 'phone numbers',
  max_sip_trunks: 'SIP trunks',
  max_agent_links: 'active agent links',
}

/** An organization's limits as the API shows them: every value filled in (an override or the default). */
export type OrganizationLimits = Record<RateLimitedAction, Rate> & Record<CapName, number>

/** A change of limits: omitted keeps, null goes back to the default (for a rate: both its fields, or the one named). */
export type LimitsPatch = Partial<Record<RateLimitedAction, { per_second?: number | null; burst?: number | null } | null>> &
  Partial<Record<CapName, number | null>>

/** The stored key of a rate's field. */
export function rateKey(action: RateLimitedAction, field: keyof Rate): string {
  return `${action}.${field}`
}

/** The stored overrides of a patch, flat; null values mean "remove the override". */
export function limitsStorage(patch: LimitsPatch): Record<string, number | null> {
  const out: Record<string, number | null> = {}
  for (const action of RATE_LIMITED_ACTIONS) {
    const given = patch[action]
    if (given === undefined) continue
    for (const field of ['per_second', 'burst'] as const) {
      const value = given === null ? null : given[field]
      if (value !== undefined) out[rateKey(action, field)] = value
    }
  }
  for (const cap of CAP_NAMES) {
    const value = patch[cap]
    if (value !== undefined) out[cap] = value
  }
  return out
}

function stored(overrides: Record<string, unknown> | null | undefined, key: string, fallback: number): number {
  const value = overrides?.[key]
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback
}

/** The effective limits of stored overrides: each override, else the default. */
export function effectiveLimits(overrides: Record<string, unknown> | null | undefined): OrganizationLimits {
  const out = {} as OrganizationLimits
  for (const action of RATE_LIMITED_ACTIONS) {
    const d = DEFAULT_RATES[action]
    out[action] = {
      per_second: stored(overrides, rateKey(action, 'per_second'), d.per_second),
      burst: stored(overrides, rateKey(action, 'burst'), d.burst),
    }
  }
  for (const cap of CAP_NAMES) out[cap] = stored(overrides, cap, DEFAULT_CAPS[cap])
  return out
}
