/**
 * The clock the SIP parts run their timers on: transactions' retransmissions and timeouts, dialogs' session timers
 * and REFER waits, RTCP's reports and the media timeout. Production passes Node's timers; tests a virtual clock,
 * so no test sleeps.
 */

/** A cancellable timer. */
export interface TimerHandle {
  cancel(): void
}

/** Schedules callbacks; production passes `setTimeout`-backed scheduling, tests a virtual clock. */
export interface TimerScheduler {
  schedule(ms: number, fire: () => void): TimerHandle
}

/** A scheduler on Node's timers, unref'd so an idle transaction never holds the process open. */
export const realTimers: TimerScheduler = {
  schedule(ms, fire) {
    const handle = setTimeout(fire, ms)
    handle.unref()
    return { cancel: () => clearTimeout(handle) }
  },
}
