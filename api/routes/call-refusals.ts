/**
 * What a caller hears when the voice hook cannot connect the call. Sessions decide the refusal (call-admission.ts,
 * which also logs its `reason`); the voice hook answers with markup that speaks the text and hangs up (HTTP 200,
 * so the carrier plays it instead of its own error message). Texts never reveal the organization's account
 * state (balance, limits).
 */
import type { CallRefusal } from '../../gateway/sessions/call-admission.js'

/** The words spoken for each refusal. */
export const REFUSAL_TEXT: Readonly<Record<CallRefusal, string>> = {
  /** No agent holds the dialled number (or its agent was deleted). */
  not_in_service: 'This number is not in service. Goodbye.',
  /** The agent's config has `clients.carrier` off. */
  clients_disabled: 'This number is not taking calls at the moment. Goodbye.',
  /** The organization's balance is used up; the caller is not told why. */
  insufficient_balance: 'We are sorry, this service is temporarily unavailable. Please try again later. Goodbye.',
  /** The organization's concurrent session limit is reached. */
  concurrency_limit: 'All our agents are busy. Please call again later. Goodbye.',
  /** This gateway process is draining for a restart. */
  shutting_down: 'We are sorry, we cannot take your call right now. Please call again in a moment. Goodbye.',
  /** An outbound call answered after voxgate gave up on it (ended, timed out) or one it never placed. */
  call_not_waiting: 'This call can no longer be connected. Goodbye.',
  /** Anything unexpected (invalid agent config, database trouble). */
  error: 'We are sorry, a technical problem prevents us from taking your call. Please try again later. Goodbye.',
}
