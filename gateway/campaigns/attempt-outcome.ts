/**
 * What an attempt came to, read from its ended session, and what follows for the contact under the campaign's
 * retry policy. Pure.
 */
import type { AttemptOutcome, RetryPolicy } from '../store/campaign-schema.js'
import type { NextStep } from '../store/campaign-attempts.js'

/** The session fields an outcome is read from. */
export interface EndedAttempt {
  readonly call_status: string | null
  readonly end_reason: string | null
  readonly answered_by: string | null
  readonly started_at: Date | null
  readonly call_sid: string | null
}

/**
 * Ended before anything reached the carrier: the organization's dial queue was full, the dialer gave up the
 * wait (shutting down), or the wait failed. Such a session is not an attempt: the contact goes back in line.
 */
const NOT_DIALLED = new Set(['dial_queue_full', 'client_disconnected', 'shutdown', 'error'])

/** The outcome of an ended session; `not_dialled` when the gateway never dialled it. */
export function attemptOutcome(s: EndedAttempt): AttemptOutcome {
  if (s.call_sid === null && s.started_at === null && s.end_reason !== null && NOT_DIALLED.has(s.end_reason)) return 'not_dialled'
  if (s.answered_by?.startsWith('machine') === true) return 'machine'
  switch (s.call_status) {
    case 'busy':
      return 'busy'
    case 'no-answer':
      return 'no_answer'
    case 'canceled':
      return 'canceled'
    case 'failed':
      return 'failed'
  }
  // The media stream opened: someone (a person, or a machine nobody detected) was connected to the agent.
  if (s.started_at !== null) return 'answered'
  return 'failed'
}

/** How long a contact whose call was never dialled waits before its next claim. */
export const NOT_DIALLED_DELAY_MS = 5_000

/** The next step after `outcome`, the contact's `attempts` counting this one (when it counts). */
export function nextStep(outcome: AttemptOutcome, attempts: number, policy: RetryPolicy): NextStep {
  switch (outcome) {
    case 'not_dialled':
    case 'outside_window':
      return { done: false, delayMs: NOT_DIALLED_DELAY_MS }
    case 'answered':
    case 'canceled':
    case 'dnc':
      return { done: true, disposition: outcome }
    default: {
      const rule = policy[outcome]
      if (attempts < rule.max_attempts) return { done: false, delayMs: rule.delay_seconds * 1000 }
      return { done: true, disposition: outcome }
    }
  }
}
