/** The false-barge-in rule's settings (turn_manager options). */
export interface BargeInRule {
  allowInterruptions: boolean
  /** Caller speech must last this long before it cuts the agent off (a cough or "mm-hm" does not). */
  minInterruptionMs: number
  /** When > 0, also require this many recognised words. */
  minInterruptionWords: number
}

/**
 * Decides when caller speech during an assistant turn is a real interruption: speech has lasted
 * `minInterruptionMs` and, when set, at least `minInterruptionWords` words were recognised. A segment that
 * ends earlier (VAD end or misfire) never interrupts.
 */
export class BargeInGate {
  #speechSince: number | undefined
  #timer: NodeJS.Timeout | undefined

  readonly #rule: BargeInRule
  readonly #onInterrupt: () => void
  readonly #words: () => number

  constructor(rule: BargeInRule, onInterrupt: () => void, words: () => number) {
    this.#rule = rule
    this.#onInterrupt = onInterrupt
    this.#words = words
  }

  /** Caller speech began while the assistant holds the turn. */
  speechStarted(now: number, allowed: boolean): void {
    if (!allowed || !this.#rule.allowInterruptions || this.#speechSince !== undefined) return
    this.#speechSince = now
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => this.#check(), this.#rule.minInterruptionMs)
    this.#timer.unref()
  }

  /** New words were recognised: the words criterion may now hold. */
  wordsChanged(): void {
    if (this.#speechSince !== undefined && this.#timer === undefined) this.#check()
  }

  /** The speech segment ended (or was a misfire) before it counted as an interruption. */
  speechEnded(): void {
    this.reset()
  }

  /** Forget any pending decision (the assistant turn ended). */
  reset(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#speechSince = undefined
  }

  #check(): void {
    this.#timer = undefined
    if (this.#speechSince === undefined) return
    if (this.#rule.minInterruptionWords > 0 && this.#words() < this.#rule.minInterruptionWords) return
    this.#speechSince = undefined
    this.#onInterrupt()
  }
}
