/**
 * RFC 4028 session timers on one call, as the UAS: each INVITE, re-INVITE or UPDATE that asks for one is
 * negotiated (session-timer.ts). When the peer is the refresher, a deadline ends the call if no refresh comes in
 * time (section 10); when we are (`refresher=uas`), a refresh of ours is due at half the interval, and the call
 * sends it (session-refresh.ts). The answer to our refresh says who refreshes next.
 */
import { getHeader, type SipHeader, type SipRequest } from '../message/sip-message.js'
import { MIN_SESSION_EXPIRES, negotiateSessionTimer, sessionTimerDeadline } from './session-timer.js'
import type { TimerHandle, TimerScheduler } from '../timer-scheduler.js'

/** What a request's session timer asks of its answer. */
export type SessionTimerAnswer =
  | { readonly ok: true; readonly headers: readonly SipHeader[] }
  | { readonly ok: false; readonly status: 400 | 422; readonly reason: string; readonly headers: readonly SipHeader[] }

/** The interval agreed and who refreshes. */
export interface SessionTimerPlan {
  readonly intervalS: number
  /** True when we refresh (`refresher=uas` on an inbound call), false when the peer does. */
  readonly weRefresh: boolean
}

/** What the timer tells its call. */
export interface SessionTimerEvents {
  /** The peer should have refreshed and did not. */
  readonly onExpired: () => void
  /** Our refresh is due; `intervalS` is the interval to ask for again. */
  readonly onRefresh: (intervalS: number) => void
}

/**
 * What the 2xx to our refresh leaves: its Session-Expires says the interval and who refreshes next (`uac` is
 * us, the refresh's sender); a 2xx without one ends the session timer (section 7.4). An unreadable one keeps ours.
 */
export function planAfterRefresh(answer: Pick<SipRequest, 'headers'> | undefined, intervalS: number): SessionTimerPlan | undefined {
  if (answer === undefined) return { intervalS, weRefresh: true }
  const value = getHeader(answer, 'Session-Expires')
  if (value === undefined) return undefined
  const m = /^\s*([0-9]{1,10})\s*(?:;\s*refresher\s*=\s*(uac|uas))?/i.exec(value)
  if (m === null) return { intervalS, weRefresh: true }
  return { intervalS: Math.max(MIN_SESSION_EXPIRES, Number(m[1])), weRefresh: m[2]?.toLowerCase() !== 'uas' }
}

/** The session timer of one dialog. */
export class CallSessionTimer {
  readonly #timers: TimerScheduler
  readonly #events: SessionTimerEvents
  #timer: TimerHandle | undefined

  /** `timers`: the endpoint's (injected in tests). */
  constructor(timers: TimerScheduler, events: SessionTimerEvents) {
    this.#timers = timers
    this.#events = events
  }

  /** True while a deadline runs. */
  get armed(): boolean {
    return this.#timer !== undefined
  }

  /** Reads the request's Session-Expires; refuses (422, 400) or gives the answer's headers. Arms nothing yet. */
  static negotiate(request: Pick<SipRequest, 'headers'>): SessionTimerAnswer & { readonly plan?: SessionTimerPlan } {
    const decision = negotiateSessionTimer(request)
    switch (decision.kind) {
      case 'none':
        return { ok: true, headers: [] }
      case 'too_small':
        return { ok: false, status: 422, reason: 'Session Interval Too Small', headers: decision.headers }
      case 'bad_request':
        return { ok: false, status: 400, reason: decision.reason, headers: [] }
      case 'timer': {
        const plan: SessionTimerPlan = { intervalS: decision.intervalS, weRefresh: decision.refresher === 'uas' }
        return { ok: true, headers: decision.headers, plan }
      }
    }
  }

  /**
   * A 2xx went out (or our refresh was answered): the next refresh of ours is due at half the interval, or the peer's
   * within its deadline; no plan, no timer at all.
   */
  arm(plan: SessionTimerPlan | undefined): void {
    this.stop()
    if (plan === undefined) return
    const deadline = sessionTimerDeadline(plan.intervalS, plan.weRefresh)
    const [ms, fire] = 'byeInMs' in deadline ? [deadline.byeInMs, this.#events.onExpired] : [deadline.refreshInMs, this.#events.onRefresh]
    this.#timer = this.#timers.schedule(ms, () => {
      this.#timer = undefined
      fire(plan.intervalS)
    })
  }

  /** Our refresh got an answer that keeps the session but did not refresh it (491, 500): try again in `ms`. */
  retry(ms: number, intervalS: number): void {
    this.stop()
    this.#timer = this.#timers.schedule(ms, () => {
      this.#timer = undefined
      this.#events.onRefresh(intervalS)
    })
  }

  /** The call ended. */
  stop(): void {
    this.#timer?.cancel()
    this.#timer = undefined
  }
}
