/**
 * What every phone call's admission shares, whichever transport brought it (the carrier's voice hook, a SIP
 * INVITE): the reasons a call is refused, and the one authorization of a call that takes its concurrency slot at
 * once. Each transport turns a refusal into its own wire answer (api/routes/call-refusals.ts for the carrier,
 * transports/sip/admission/sip-refusals.ts for SIP).
 */
import { isVoxgateError } from '../../core/errors.js'
import type { SessionOrigin } from '../store/session-keys.js'
import { authorizeSession } from './authorize.js'
import type { CallDeps } from './call-deps.js'

/** Why a call was refused at admission. */
export type CallRefusal =
  /** No agent holds the dialled number (or its agent was deleted). */
  | 'not_in_service'
  /** The agent's config has `clients.carrier` off. */
  | 'clients_disabled'
  | 'insufficient_balance'
  | 'concurrency_limit'
  /** This gateway process is draining for a restart: retryable, another replica takes the call. */
  | 'shutting_down'
  /** An outbound call answered after voxgate gave up on it (ended, timed out), or one it never placed. */
  | 'call_not_waiting'
  /** Anything unexpected (invalid agent config, database trouble). */
  | 'error'

/** A refusal an error thrown while authorizing a call stands for. */
export type AuthorizationRefusal = Exclude<CallRefusal, 'shutting_down' | 'call_not_waiting'>

/** The refusal an error thrown while authorizing a call stands for (the carrier's voice hook and SIP read it alike). */
export function refusalFor(e: unknown): AuthorizationRefusal {
  if (!isVoxgateError(e)) return 'error'
  switch (e.code) {
    case 'invalid_agent_id':
      return 'not_in_service'
    case 'bad_request':
      return 'clients_disabled'
    case 'insufficient_balance':
      return 'insufficient_balance'
    case 'concurrency_limit':
      return 'concurrency_limit'
    default:
      return 'error'
  }
}

/** An authorized call: its session and the one-time key its media connects with; or the refusal and its cause. */
export type AuthorizedCall =
  | { readonly ok: true; readonly sessionId: string; readonly key: string }
  | { readonly ok: false; readonly refusal: AuthorizationRefusal; readonly err: unknown }

/**
 * Authorizes a phone call to an agent the way authorize_session does (agent, balance, concurrency, the agent's
 * `clients`), holding the call's concurrency slot for this process from now on.
 */
export async function authorizePhoneCall(
  deps: Pick<CallDeps, 'db' | 'sessions' | 'webhookPolicy'>,
  call: { readonly organizationId: string; readonly agentId: string; readonly origin: SessionOrigin },
): Promise<AuthorizedCall> {
  try {
    const auth = await authorizeSession(
      deps.db,
      {
        organizationId: call.organizationId,
        agentId: call.agentId,
        origin: call.origin,
        holdLease: { owner: deps.sessions.keeper.owner, ttlMs: deps.sessions.keeper.ttlMs },
      },
      { webhookPolicy: deps.webhookPolicy },
    )
    return { ok: true, sessionId: auth.sessionId, key: auth.clientSessionKey }
  } catch (err) {
    return { ok: false, refusal: refusalFor(err), err }
  }
}
