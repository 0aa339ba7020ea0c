/**
 * Calling windows: the days and hours a campaign may ring a person, in that person's local time. Pure: the
 * current time is always passed in. A window is open from `startMinute` (minutes after local midnight,
 * inclusive) to `endMinute` (exclusive) on each of `days` (ISO: 1 Monday .. 7 Sunday); it never spans midnight.
 */

/** A calling window. */
export interface CallingWindow {
  readonly days: readonly number[]
  readonly startMinute: number
  readonly endMinute: number
}

/** The three-letter day names the API accepts, by ISO number (index 0 is Monday). */
export const DAY_NAMES = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const

const formats = new Map<string, Intl.DateTimeFormat>()

function format(timeZone: string): Intl.DateTimeFormat {
  let f = formats.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
    // A campaign sees a handful of zones; the cache is bounded anyway.
    if (formats.size >= 1000) formats.clear()
    formats.set(timeZone, f)
  }
  return f
}

/** True when `timeZone` is an IANA zone this runtime knows. */
export function isKnownTimeZone(timeZone: string): boolean {
  if (timeZone.length === 0 || timeZone.length > 64) return false
  try {
    format(timeZone)
    return true
  } catch {
    return false
  }
}

/** The ISO weekday and the minute of the day at `at` in `timeZone`. */
export function localClock(at: Date, timeZone: string): { isoDay: number; minute: number } {
  let day = 0
  let hour = 0
  let minute = 0
  for (const part of format(timeZone).formatToParts(at)) {
    if (part.type === 'weekday') day = DAY_NAMES.indexOf(part.value.slice(0, 3).toLowerCase() as (typeof DAY_NAMES)[number]) + 1
    else if (part.type === 'hour') hour = Number(part.value)
    else if (part.type === 'minute') minute = Number(part.value)
  }
  return { isoDay: day, minute: hour * 60 + minute }
}

/** True when `window` is open at `at` for a person in `timeZone`. */
export function windowOpen(window: CallingWindow, timeZone: string, at: Date): boolean {
  const local = localClock(at, timeZone)
  return window.days.includes(local.isoDay) && local.minute >= window.startMinute && local.minute < window.endMinute
}

const MINUTE_MS = 60_000

/**
 * Milliseconds from `at` until `window` closes for a person in `timeZone` (0 when it is closed now). Read from the
 * local minute, so a clock change inside the window moves the end by its size at most.
 */
export function msUntilWindowCloses(window: CallingWindow, timeZone: string, at: Date): number {
  if (!windowOpen(window, timeZone, at)) return 0
  const local = localClock(at, timeZone)
  return Math.max(0, (window.endMinute - local.minute) * MINUTE_MS - (at.getTime() % MINUTE_MS))
}

/**
 * When `window` next opens for a person in `timeZone`, to the minute: `at` itself when open now, undefined when
 * it never opens (no days). Looks up to eight days ahead in steps no longer than the window (15 minutes at most, so
 * a short window is not stepped over), then back to the minute it opened.
 */
export function nextWindowOpening(window: CallingWindow, timeZone: string, at: Date): Date | undefined {
  if (windowOpen(window, timeZone, at)) return at
  const start = Math.floor(at.getTime() / MINUTE_MS) * MINUTE_MS + MINUTE_MS
  const step = Math.max(1, Math.min(15, window.endMinute - window.startMinute)) * MINUTE_MS
  for (let t = start; t < start + 8 * 24 * 3_600_000; t += step) {
    if (!windowOpen(window, timeZone, new Date(t))) continue
    let first = t
    while (first - MINUTE_MS >= start && windowOpen(window, timeZone, new Date(first - MINUTE_MS))) first -= MINUTE_MS
    return new Date(first)
  }
  return undefined
}

/** `HH:MM` (00:00 to 24:00) as minutes after midnight; undefined when malformed. */
export function parseClockTime(value: string): number | undefined {
  const m = /^([01]\d|2[0-4]):([0-5]\d)$/.exec(value)
  if (m === null) return undefined
  const minutes = Number(m[1]) * 60 + Number(m[2])
  return minutes > 1440 ? undefined : minutes
}

/** Minutes after midnight as `HH:MM`. */
export function formatClockTime(minutes: number): string {
  return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`
}
