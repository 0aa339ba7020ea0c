/**
 * The admission of a browser session, as both authorize_session routes ask it (with an API key, through an agent
 * link): authorized for an organization's agent on the browser channel, refusals counted there, a config override's
 * webhook URLs held to the webhook and egress policies. The key it returns opens the session when the browser
 * connects (transports/browser); the routes turn a refusal into the API's error body.
 */
import type { Kysely } from 'kysely'
import type { UrlPolicy } from '../../pipeline/index.js'
import type { Database } from '../store/schema.js'
import type { EgressPolicy } from '../webhooks/egress-policy.js'
import { type Authorization, type AuthorizeInput, authorizeSession } from './authorize.js'

/** What counts refused sessions, by channel and reason. */
export interface RefusalCounter {
  sessionRefused(channel: string, reason: string): void
}

/** What authorizing a browser session needs besides the request. */
export interface BrowserAuthorizeDeps {
  readonly db: Kysely<Database>
  readonly webhookPolicy: UrlPolicy
  /** Counts sessions refused at authorization (the organization's balance). */
  readonly metrics?: RefusalCounter | undefined
  /** Refuses override webhook URLs pointing where webhooks may not go. */
  readonly egress?: EgressPolicy | undefined
}

/** A browser session authorized for an organization's agent; throws the registered errors of `authorizeSession`. */
export function authorizeBrowserSession(deps: BrowserAuthorizeDeps, input: Omit<AuthorizeInput, 'origin'>): Promise<Authorization> {
  return authorizeSession(
    deps.db,
    { ...input, origin: { channel: 'browser' } },
    {
      webhookPolicy: deps.webhookPolicy,
      refused: (reason) => deps.metrics?.sessionRefused('browser', reason),
      egress: deps.egress,
    },
  )
}
