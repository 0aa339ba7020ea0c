/** The false-barge-in rule's settings (turn_manager options). */
export interface BargeInRule {
  allowInterruptions: boolean
  /** Caller speech must last this long before it cuts the agent off (a cough or "mm-hm" does not). */
  minInterruptionMs: number
  /** When > 0, also require this many recognised words. */
  minInterruptionWords: number
  /**
   * Read the words before cutting the agent off: speech that is only a backchannel ("uh-huh", "yeah") never
   * interrupts, and speech with no words yet waits for them (at most {@link NO_WORDS_GRACE_MS} more).
   */
  readWords: boolean
}

/** What the caller's words so far say: nothing yet, only a backchannel, or more. */
export type HeardWords = { count: number; kind: 'nothing' | 'backchannel' | 'words' }

/**
 * With `readWords`, how long speech past `minInterruptionMs` may go on with no recognised word before it interrupts
 * anyway (the STT is slow or heard nothing it could spell): long speech is not a backchannel.
 */
export const NO_WORDS_GRACE_MS = 1500

/**
 * Decides when caller speech during an assistant turn is a real interruption: speech has lasted
 * `minInterruptionMs`, when set at least `minInterruptionWords` words were recognised, and with `readWords` the
 * words are not only a backchannel. A segment that ends before `minInterruptionMs` never interrupts; one that lasted
 * long enough but whose words were not in yet interrupts when they come, unless they are a backchannel.
 */
export class BargeInGate {
  #speechSince: number | undefined
  /** `minInterruptionMs` of speech have passed in this segment: the words decide from here. */
  #due = false
  #timer: NodeJS.Timeout | undefined
  #grace: NodeJS.Timeout | undefined

  readonly #rule: BargeInRule
  readonly #onInterrupt: () => void
  readonly #heard: () => HeardWords

  constructor(rule: BargeInRule, onInterrupt: () => void, heard: () => HeardWords) {
    this.#rule = rule
    this.#onInterrupt = onInterrupt
    this.#heard = heard
  }

  /** Caller speech began while the assistant holds the turn. */
  speechStarted(now: number, allowed: boolean): void {
    if (!allowed || !this.#rule.allowInterruptions || this.#speechSince !== undefined) return
    this.#speechSince = now
    this.#due = false
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => {
      this.#due = true
      this.#check(true)
    }, this.#rule.minInterruptionMs)
    this.#timer.unref()
  }

  /** New words were recognised: the words criterion may now hold. */
  wordsChanged(): void {
    if (this.#speechSince !== undefined && this.#due) this.#check(false)
  }

  /**
   * The speech segment ended. Before `minInterruptionMs` it never counts; after it, with `readWords`, its words may
   * still be on their way and decide when they come.
   */
  speechEnded(): void {
    clearTimeout(this.#grace)
    this.#grace = undefined
    if (!(this.#due && this.#rule.readWords)) this.reset()
  }

  /** Forget any pending decision (the assistant turn ended). */
  reset(): void {
    clearTimeout(this.#timer)
    clearTimeout(this.#grace)
    this.#timer = undefined
    this.#grace = undefined
    this.#speechSince = undefined
    this.#due = false
  }

  #check(speaking: boolean): void {
    if (this.#speechSince === undefined) return
    const heard = this.#heard()
    if (this.#rule.minInterruptionWords > 0 && heard.count < this.#rule.minInterruptionWords) return
    if (this.#rule.readWords) {
      if (heard.kind === 'backchannel') return
      if (heard.kind === 'nothing') {
        if (speaking && this.#grace === undefined) {
          // Words that came meanwhile decide through wordsChanged; a backchannel among them still holds.
          this.#grace = setTimeout(() => {
            if (this.#heard().kind !== 'backchannel') this.#fire()
          }, NO_WORDS_GRACE_MS)
          this.#grace.unref()
        }
        return
      }
    }
    this.#fire()
  }

  #fire(): void {
    this.reset()
    this.#onInterrupt()
  }
}
