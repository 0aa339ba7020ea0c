/**
 * A session's clocks: the duration limit (`session_duration_timeout_minutes`) and the user-silence timeout, and the
 * holds that stop the first: while the caller is on hold (a SIP peer's re-INVITE hold, or a warm transfer's hold
 * before the human answers), the call is not using the agent, so the duration limit is extended by the time held.
 * The held spans go to the recording's metadata too.
 */
import type { PipelineConfig } from '../../pipeline/index.js'

/** Why the caller is held. */
export type HoldKind = 'sip_hold' | 'transfer_hold'

/** One hold, in ms since the session's clocks started; `to` undefined while it lasts. */
export interface HeldSpan {
  readonly kind: HoldKind
  readonly from: number
  to: number | undefined
}

/** Holds listed at most (a peer toggling hold for ever does not grow the list; the time still counts). */
export const MAX_HELD_SPANS = 200

/** What the clocks act on. */
export interface SessionClockDeps {
  readonly config: PipelineConfig
  /** Length of a "minute" (tests shorten it). */
  readonly minuteMs: number
  /** A warm transfer runs: the caller is talking to a human or waiting for one, which is not silence. */
  isTransferring(): boolean
  end(reason: 'duration_timeout' | 'silence_timeout'): void
  /** The recording, told when a hold starts and ends (its metadata lists the held spans). */
  recordingHeld?(kind: HoldKind, on: boolean): void
  now?: () => number
}

/** The duration limit, the user-silence timeout and the holds of one session. */
export class SessionClocks {
  readonly #deps: SessionClockDeps
  readonly #now: () => number
  #startedAt = 0
  #durationTimer: NodeJS.Timeout | undefined
  #silenceTimer: NodeJS.Timeout | undefined
  readonly #held: HeldSpan[] = []
  /** Time held in spans no longer listed (beyond `MAX_HELD_SPANS`). */
  #forgottenMs = 0
  /** Holds on now, by kind (a transfer's hold may overlap a SIP hold). */
  readonly #on = new Map<HoldKind, HeldSpan>()
  #stopped = false

  constructor(deps: SessionClockDeps) {
    this.#deps = deps
    this.#now = deps.now ?? Date.now
  }

  /** Starts the duration limit and the user-silence timeout. */
  start(): void {
    this.#startedAt = this.#now()
    this.#armDuration(this.#deps.config.session_duration_timeout_minutes * this.#deps.minuteMs)
    this.noteUserActivity()
  }

  /** The user spoke or typed: restarts the user-silence timeout when one is configured. */
  noteUserActivity(): void {
    if (this.#stopped) return
    const tm = this.#deps.config.plugins.find((p) => p.use === 'turn_manager')
    const minutes = tm?.use === 'turn_manager' ? tm.options.user_silence_timeout_minutes : undefined
    if (minutes === undefined || minutes === null) return
    clearTimeout(this.#silenceTimer)
    // A warm transfer keeps the caller away from the agent (talking to a human): it is not silence.
    const expire = () => (this.#deps.isTransferring() ? this.noteUserActivity() : this.#deps.end('silence_timeout'))
    this.#silenceTimer = setTimeout(expire, minutes * this.#deps.minuteMs).unref()
  }

  /** The caller was put on hold (`on`) or taken off it, for `kind`. */
  held(kind: HoldKind, on: boolean): void {
    if (this.#stopped || on === this.#on.has(kind)) return
    const at = this.#now() - this.#startedAt
    if (on) {
      const span: HeldSpan = { kind, from: at, to: undefined }
      this.#on.set(kind, span)
      this.#held.push(span)
      if (this.#held.length > MAX_HELD_SPANS) {
        const old = this.#held.shift()
        if (old !== undefined && old.to !== undefined) this.#forgottenMs += old.to - old.from
      }
    } else {
      const span = this.#on.get(kind)
      if (span !== undefined) span.to = at
      this.#on.delete(kind)
    }
    this.#deps.recordingHeld?.(kind, on)
  }

  /** The holds so far, oldest first. */
  get heldSpans(): readonly HeldSpan[] {
    return this.#held
  }

  /** Ms the caller has been held so far (overlapping holds count once). */
  heldMs(): number {
    const now = this.#now() - this.#startedAt
    const spans = this.#held.map((s) => [s.from, s.to ?? now] as const).sort((a, b) => a[0] - b[0])
    let total = this.#forgottenMs
    let reach = Number.NEGATIVE_INFINITY
    for (const [from, to] of spans) {
      const start = Math.max(from, reach)
      if (to > start) total += to - start
      reach = Math.max(reach, to)
    }
    return total
  }

  /** Stops every timer (the session ended). */
  stop(): void {
    this.#stopped = true
    clearTimeout(this.#durationTimer)
    clearTimeout(this.#silenceTimer)
  }

  /**
   * The limit counts time not held: when it runs out while the caller was held for some of it, it is armed again
   * for what is left; while a hold lasts it looks again each second.
   */
  #armDuration(ms: number): void {
    this.#durationTimer = setTimeout(() => {
      if (this.#stopped) return
      const limit = this.#deps.config.session_duration_timeout_minutes * this.#deps.minuteMs
      const used = this.#now() - this.#startedAt - this.heldMs()
      if (used >= limit - 1) return this.#deps.end('duration_timeout')
      this.#armDuration(this.#on.size > 0 ? Math.min(limit - used, HOLD_RECHECK_MS) : limit - used)
    }, ms).unref()
  }
}

/** While held, how often the duration limit looks whether the hold ended. */
const HOLD_RECHECK_MS = 1_000
