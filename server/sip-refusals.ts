/**
 * The one table from why a SIP call is refused to the status and reason phrase the caller's INVITE gets
 * (docs/reference/sip.md, "Refusals"). The reasons are the carrier path's (`CallRefusal`, decided when a call is
 * admitted) and the session manager's (`OpenRefusal`, when its key opens the session), plus SIP's own.
 */
import type { CallRefusal } from '../gateway/sessions/call-admission.js'
import type { OpenRefusal } from '../gateway/sessions/session-manager.js'
import type { SipRefusal } from '../transports/sip/calls/sip-admission.js'

/** Why a SIP INVITE is refused. */
export type SipCallRefusal =
  | Exclude<CallRefusal, 'call_not_waiting'>
  | Exclude<OpenRefusal, 'unknown' | 'used' | 'expired'>
  /** No trunk allows the source address. */
  | 'unknown_source'
  /** The trunk asks for digest and the INVITE carried none (or a stale nonce): a challenge. */
  | 'auth_required'
  /** The INVITE's digest credentials are wrong. */
  | 'auth_failed'
  /** The source gave too many wrong digest answers and is blocked for a while (server/sip-auth-lockout.ts). */
  | 'auth_blocked'

/** Seconds a caller refused by a draining replica waits before it tries again (the balancer tries another). */
export const SIP_RETRY_AFTER_S = 30

/** Status and reason phrase for each refusal. */
export const SIP_REFUSALS: Readonly<Record<SipCallRefusal, { status: number; reason: string; retryAfterS?: number }>> = {
  unknown_source: { status: 403, reason: 'no SIP trunk for this address' },
  auth_required: { status: 401, reason: 'Unauthorized' },
  auth_failed: { status: 403, reason: 'bad credentials' },
  auth_blocked: { status: 403, reason: 'too many failed authentications' },
  not_in_service: { status: 404, reason: 'number not in service' },
  clients_disabled: { status: 403, reason: 'phone calls are disabled for this agent' },
  insufficient_balance: { status: 403, reason: 'insufficient balance' },
  concurrency_limit: { status: 486, reason: 'concurrent session limit reached' },
  shutting_down: { status: 503, reason: 'the gateway is shutting down', retryAfterS: SIP_RETRY_AFTER_S },
  error: { status: 480, reason: 'the agent cannot take calls now' },
}

/** The refusal as the endpoint answers it; `headers` adds to the table's (WWW-Authenticate for a challenge). */
export function sipRefusal(why: SipCallRefusal, headers: { name: string; value: string }[] = []): SipRefusal {
  const r = SIP_REFUSALS[why]
  const retry = r.retryAfterS === undefined ? [] : [{ name: 'Retry-After', value: String(r.retryAfterS) }]
  return { admit: false, status: r.status, reason: r.reason, headers: [...retry, ...headers] }
}
