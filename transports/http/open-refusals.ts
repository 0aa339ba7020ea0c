import type { OpenRefusal } from '../../gateway/sessions/session-manager.js'

/**
 * HTTP status and message for each reason a session key is refused at connect time (the reason is the session
 * manager's `OpenRefusal`; every WebSocket upgrade answers with these). A call refused earlier, at the voice
 * hook, has a `CallRefusal` decided by call-admission.ts and answered by api/routes/call-refusals.ts.
 */
export const OPEN_REFUSALS: Record<OpenRefusal, { status: number; message: string; retryAfterSeconds?: number }> = {
  unknown: { status: 401, message: 'unknown client_session_key' },
  used: { status: 401, message: 'client_session_key was already used or replaced by a newer authorization' },
  expired: { status: 401, message: 'client_session_key has expired (keys are valid for 1 hour)' },
  concurrency_limit: { status: 429, message: 'concurrent session limit reached' },
  insufficient_balance: { status: 402, message: 'insufficient balance' },
  /**
   * This process drains: the key is left unused, so the same upgrade succeeds on another replica (a balancer
   * retries a 503 on the next upstream) or on a restarted one.
   */
  shutting_down: { status: 503, message: 'the gateway is shutting down', retryAfterSeconds: 1 },
  error: { status: 500, message: 'the session could not start' },
}
