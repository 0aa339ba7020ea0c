/** Spans kept at most; a session pausing more often than this forgets its oldest pauses (they are long written). */
export const MAX_PAUSE_SPANS = 200

/** One pause, in the clock's ms; `to` undefined while it lasts. */
export interface PauseSpan {
  readonly from: number
  to: number | undefined
}

/** When a session was paused (`response.recording`), on one clock. */
export class PauseSpans {
  readonly #now: () => number
  readonly #spans: PauseSpan[] = []

  constructor(now: () => number) {
    this.#now = now
  }

  get paused(): boolean {
    return this.#spans.at(-1)?.to === undefined && this.#spans.length > 0
  }

  /** Starts a pause now; true when it was not paused already. */
  pause(): boolean {
    if (this.paused) return false
    this.#spans.push({ from: this.#now(), to: undefined })
    if (this.#spans.length > MAX_PAUSE_SPANS) this.#spans.shift()
    return true
  }

  /** Ends the pause now; true when there was one. */
  resume(): boolean {
    const last = this.#spans.at(-1)
    if (last === undefined || last.to !== undefined) return false
    last.to = this.#now()
    return true
  }

  /** True when `at` falls in a pause (an open pause covers everything after its start). */
  covers(at: number): boolean {
    return this.#spans.some((s) => at >= s.from && (s.to === undefined || at < s.to))
  }

  /** The pauses so far, oldest first. */
  list(): readonly PauseSpan[] {
    return this.#spans
  }
}
