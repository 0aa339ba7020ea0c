/** A virtual clock for code that takes a TimerScheduler: `advance(ms)` fires due timers in order, in no real time. */
import type { TimerScheduler } from '../../transports/sip/timer-scheduler.js'

/** Timers on a clock that starts at `start` ms and moves only when `advance` is called. */
export function virtualTimers(start = 0): { timers: TimerScheduler; advance(ms: number): void; now(): number } {
  let now = start
  const pending: { at: number; fire: () => void; cancelled: boolean }[] = []
  const timers: TimerScheduler = {
    schedule(ms, fire) {
      const entry = { at: now + ms, fire, cancelled: false }
      pending.push(entry)
      return {
        cancel: () => {
          entry.cancelled = true
        },
      }
    },
  }
  const advance = (ms: number): void => {
    const until = now + ms
    for (;;) {
      const due = pending.filter((p) => !p.cancelled && p.at <= until).sort((a, b) => a.at - b.at)[0]
      if (due === undefined) break
      pending.splice(pending.indexOf(due), 1)
      now = due.at
      due.fire()
    }
    now = until
  }
  return { timers, advance, now: () => now }
}
