/**
 * RFC 4028 session timers on one call, as the UAS: each INVITE, re-INVITE or UPDATE that asks for one is
 * negotiated (session-timer.ts), and when the peer is the refresher, a deadline ends the call if no refresh comes
 * in time (section 10). We do not send refreshes ourselves: when the peer leaves the refreshing to us, the 2xx
 * carries no Session-Expires, which section 7.2 reads as "no session expiration" (unless the peer required the
 * extension, in which case the timer is granted and the peer is trusted to keep the call up itself).
 */
import { getHeaderValues, type SipHeader, type SipRequest } from './sip-message.js'
import { negotiateSessionTimer, sessionTimerDeadline } from './session-timer.js'
import type { TimerHandle, TimerScheduler } from './transaction-timers.js'

/** What a request's session timer asks of its answer. */
export type SessionTimerAnswer =
  | { readonly ok: true; readonly headers: readonly SipHeader[] }
  | { readonly ok: false; readonly status: 400 | 422; readonly reason: string; readonly headers: readonly SipHeader[] }

/** The session timer of one dialog. */
export class CallSessionTimer {
  readonly #timers: TimerScheduler
  readonly #onExpired: () => void
  #timer: TimerHandle | undefined

  /** `onExpired`: the peer should have refreshed and did not. `timers`: the endpoint's (injected in tests). */
  constructor(timers: TimerScheduler, onExpired: () => void) {
    this.#timers = timers
    this.#onExpired = onExpired
  }

  /** True while a deadline runs. */
  get armed(): boolean {
    return this.#timer !== undefined
  }

  /** Reads the request's Session-Expires; refuses (422, 400) or gives the answer's headers. Arms nothing yet. */
  static negotiate(request: Pick<SipRequest, 'headers'>): SessionTimerAnswer & { readonly intervalS?: number } {
    const decision = negotiateSessionTimer(request)
    switch (decision.kind) {
      case 'none':
        return { ok: true, headers: [] }
      case 'too_small':
        return { ok: false, status: 422, reason: 'Session Interval Too Small', headers: decision.headers }
      case 'bad_request':
        return { ok: false, status: 400, reason: decision.reason, headers: [] }
      case 'timer': {
        const required = (getHeaderValues(request, 'Require') ?? []).some((v) => v.toLowerCase() === 'timer')
        if (decision.refresher === 'uas' && !required) return { ok: true, headers: [] }
        return { ok: true, headers: decision.headers, intervalS: decision.refresher === 'uac' ? decision.intervalS : undefined }
      }
    }
  }

  /** The 2xx went out: a refresh by the peer is due within the interval (or no deadline at all). */
  arm(intervalS: number | undefined): void {
    this.stop()
    if (intervalS === undefined) return
    const deadline = sessionTimerDeadline(intervalS, false)
    if (!('byeInMs' in deadline)) return
    this.#timer = this.#timers.schedule(deadline.byeInMs, () => {
      this.#timer = undefined
      this.#onExpired()
    })
  }

  /** The call ended. */
  stop(): void {
    this.#timer?.cancel()
    this.#timer = undefined
  }
}
