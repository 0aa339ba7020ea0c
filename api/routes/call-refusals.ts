/**
 * What the voice hook answers when it cannot connect the call. Sessions decide the refusal (call-admission.ts,
 * which also logs its `reason`). Most refusals are final: the voice hook answers with markup that speaks the text
 * and hangs up (HTTP 200, so the carrier plays it instead of its own error message). A refusal that only says
 * "not this process, not now" is answered with a retryable HTTP error instead, so a load balancer or the
 * carrier's retry policy hands the call to another replica. Texts never reveal the organization's account
 * state (balance, limits).
 */
import type { ErrorCode } from '../../core/errors.js'
import type { CallRefusal } from '../../gateway/admission/phone-call.js'

/**
 * Refusals answered with the SPEC's error body and `Retry-After` instead of words. `shutting_down`: this replica
 * is draining; any other replica (or this address a moment later, behind a balancer) takes the call. Spoken, it
 * would be a failed call start during every rolling restart.
 */
export const RETRYABLE_REFUSALS = {
  shutting_down: {
    code: 'shutting_down',
    message: 'this gateway is draining for a restart: retry the voice hook (another replica takes the call)',
    retryAfterSeconds: 1,
  },
} as const satisfies Partial<Record<CallRefusal, { code: ErrorCode; message: string; retryAfterSeconds: number }>>

/** A refusal the caller hears. */
export type SpokenRefusal = Exclude<CallRefusal, keyof typeof RETRYABLE_REFUSALS>

/** True for a refusal answered with a retryable HTTP error. */
export function isRetryableRefusal(refusal: CallRefusal): refusal is keyof typeof RETRYABLE_REFUSALS {
  return Object.hasOwn(RETRYABLE_REFUSALS, refusal)
}

/** The words spoken for each final refusal. */
export const REFUSAL_TEXT: Readonly<Record<SpokenRefusal, string>> = {
  /** No agent holds the dialled number (or its agent was deleted). */
  not_in_service: 'This number is not in service. Goodbye.',
  /** The agent's config has `clients.carrier` off. */
  clients_disabled: 'This number is not taking calls at the moment. Goodbye.',
  /** The organization's balance is used up; the caller is not told why. */
  insufficient_balance: 'We are sorry, this service is temporarily unavailable. Please try again later. Goodbye.',
  /** The organization's concurrent session limit is reached. */
  concurrency_limit: 'All our agents are busy. Please call again later. Goodbye.',
  /** An outbound call answered after voxgate gave up on it (ended, timed out) or one it never placed. */
  call_not_waiting: 'This call can no longer be connected. Goodbye.',
  /** Anything unexpected (invalid agent config, database trouble). */
  error: 'We are sorry, a technical problem prevents us from taking your call. Please try again later. Goodbye.',
}
