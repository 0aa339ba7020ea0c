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
 * Holding the agent's audio while the words are awaited: `pause` stops playout where it is (nothing is dropped),
 * `resume` carries on from there. Without it the agent talks on until the words decide.
 */
export interface PlayoutHold {
  pause(): void
  resume(): void
}

/**
 * With `readWords`, how long speech past `minInterruptionMs` may go on with no recognised word before it interrupts
 * anyway (the STT is slow or heard nothing it could spell): long speech is not a backchannel.
 */
export const NO_WORDS_GRACE_MS = 1500

/**
 * How long after paused speech ends the agent stays paused for words that may still come (the STT is a few hundred
 * ms behind the audio): with none by then it was a cough or line noise, and the agent resumes.
 */
export const NO_WORDS_RESUME_MS = 600

/**
 * Decides when caller speech during an assistant turn is a real interruption: speech has lasted
 * `minInterruptionMs`, when set at least `minInterruptionWords` words were recognised, and with `readWords` the
 * words are not only a backchannel. A segment that ends before `minInterruptionMs` never interrupts; one that lasted
 * long enough but whose words were not in yet interrupts when they come, unless they are a backchannel.
 *
 * With a `PlayoutHold`, the agent stops talking as soon as speech has lasted `minInterruptionMs` even while the
 * words are awaited (it is paused, not cut off): words that are more than a backchannel then interrupt it, and it
 * resumes where it paused when they are only a backchannel (once the caller has stopped speaking) or when none come
 * within {@link NO_WORDS_RESUME_MS} of the end of the speech. So a genuine interruption is heard to stop within
 * `minInterruptionMs`, and a backchannel costs a short gap instead of the rest of the reply.
 */
export class BargeInGate {
  #speechSince: number | undefined
  /** `minInterruptionMs` of speech have passed in this segment: the words decide from here. */
  #due = false
  /** The caller is speaking in the segment being decided. */
  #speaking = false
  /** Words heard before this segment began: only later ones are this segment's. */
  #wordsBefore = 0
  #paused = false
  #timer: NodeJS.Timeout | undefined
  #grace: NodeJS.Timeout | undefined
  #resumeTimer: NodeJS.Timeout | undefined

  readonly #rule: BargeInRule
  readonly #onInterrupt: () => void
  readonly #heard: () => HeardWords
  readonly #hold: PlayoutHold | undefined

  constructor(rule: BargeInRule, onInterrupt: () => void, heard: () => HeardWords, hold?: PlayoutHold) {
    this.#rule = rule
    this.#onInterrupt = onInterrupt
    this.#heard = heard
    this.#hold = hold
  }

  /** The agent's playout is paused for caller speech whose words are awaited. */
  get paused(): boolean {
    return this.#paused
  }

  /** Caller speech began while the assistant holds the turn. */
  speechStarted(now: number, allowed: boolean): void {
    if (!allowed || !this.#rule.allowInterruptions) return
    clearTimeout(this.#resumeTimer)
    this.#resumeTimer = undefined
    if (this.#speechSince !== undefined) {
      // More speech while the last segment is still timed or its words are awaited (paused): one decision. With a
      // hold, speech after a backchannel, or after noise the agent resumed from, is a segment of its own (it may pause
      // again); without one, the words decide from here on.
      if (!this.#due || this.#paused || this.#hold === undefined) {
        this.#speaking = true
        return
      }
    }
    this.#speechSince = now
    this.#due = false
    this.#speaking = true
    this.#wordsBefore = this.#heard().count
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => {
      this.#due = true
      this.#check()
    }, this.#rule.minInterruptionMs)
    this.#timer.unref()
  }

  /** New words were recognised: the words criterion may now hold. */
  wordsChanged(): void {
    if (this.#speechSince !== undefined && this.#due) this.#check()
  }

  /**
   * The speech segment ended. Before `minInterruptionMs` it never counts; after it, with `readWords`, its words may
   * still be on their way and decide when they come (a paused agent resumes if none come in time).
   */
  speechEnded(): void {
    this.#speaking = false
    clearTimeout(this.#grace)
    this.#grace = undefined
    if (!(this.#due && this.#rule.readWords)) {
      this.reset()
      return
    }
    if (!this.#paused) return
    if (this.#kindOfSegment() === 'backchannel') {
      this.#resume()
      return
    }
    this.#resumeTimer = setTimeout(() => {
      this.#resumeTimer = undefined
      this.#resume()
    }, NO_WORDS_RESUME_MS)
    this.#resumeTimer.unref()
  }

  /** Forget any pending decision (the assistant turn ended); a paused agent resumes. */
  reset(): void {
    const paused = this.#paused
    this.#clear()
    if (paused) this.#hold?.resume()
  }

  #clear(): void {
    clearTimeout(this.#timer)
    clearTimeout(this.#grace)
    clearTimeout(this.#resumeTimer)
    this.#timer = undefined
    this.#grace = undefined
    this.#resumeTimer = undefined
    this.#speechSince = undefined
    this.#due = false
    this.#speaking = false
    this.#paused = false
  }

  /**
   * The words so far as this segment's: with a hold, words from before it began do not make it speech that was
   * understood (it pauses until its own words come).
   */
  #kindOfSegment(): HeardWords['kind'] {
    const heard = this.#heard()
    return this.#hold !== undefined && heard.count <= this.#wordsBefore ? 'nothing' : heard.kind
  }

  #check(): void {
    if (this.#speechSince === undefined) return
    const heard = this.#heard()
    const kind = this.#kindOfSegment()
    if (this.#rule.readWords && kind === 'backchannel') {
      // Only a backchannel so far: talk on, unless the caller is still speaking (it may be "yeah, but...").
      if (!this.#speaking) this.#resume()
      return
    }
    const fewWords = this.#rule.minInterruptionWords > 0 && heard.count < this.#rule.minInterruptionWords
    const noWords = this.#rule.readWords && kind === 'nothing'
    if (!fewWords && !noWords) {
      this.#fire()
      return
    }
    this.#pause()
    if (noWords && this.#speaking && this.#grace === undefined) {
      // Words that came meanwhile decide through wordsChanged; a backchannel among them still holds.
      this.#grace = setTimeout(() => {
        if (this.#heard().kind !== 'backchannel') this.#fire()
      }, NO_WORDS_GRACE_MS)
      this.#grace.unref()
    }
  }

  #pause(): void {
    if (this.#paused || this.#hold === undefined) return
    this.#paused = true
    this.#hold.pause()
  }

  #resume(): void {
    clearTimeout(this.#resumeTimer)
    this.#resumeTimer = undefined
    if (!this.#paused) return
    this.#paused = false
    this.#hold?.resume()
  }

  #fire(): void {
    // The interrupt clears the paused audio (or, when the reply may no longer be interrupted, resumes it).
    this.#clear()
    this.#onInterrupt()
  }
}
