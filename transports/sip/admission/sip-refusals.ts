/**
 * The one table from why a SIP call is refused to the status and reason phrase the caller's INVITE gets
 * (docs/reference/sip.md, "Refusals"). The reasons are the gateway's admission's (`SipCallRefusal`,
 * gateway/admission/sip-trunk-admission.ts); the answers on the wire are SIP's own.
 */
import type { SipCallRefusal } from '../../../gateway/admission/sip-trunk-admission.js'
import type { SipRefusal } from '../calls/sip-admission.js'

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
