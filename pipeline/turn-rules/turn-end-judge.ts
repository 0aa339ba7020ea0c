import type { CountryCode } from 'libphonenumber-js'
import { completeShortAnswer } from './complete-answer.js'
import { readSpoken } from './spoken-text.js'
import { trailingNumber } from './trailing-number.js'
import { unfinishedDate } from './unfinished-date.js'
import { unfinishedPhrase } from './unfinished-phrase.js'

/** Why the words say a turn goes on: the suffix of an `extended:` reason. */
export type ExtendedWhy =
  | 'incomplete_number'
  | 'awaiting_number'
  | 'open_number'
  | 'trailing_conjunction'
  | 'filler'
  | 'open_list'
  | 'spelling'
  | 'incomplete_date'

/** Why a user turn ended when it did, as the transcript stores it. */
export type TurnEndReason =
  | 'complete_answer'
  | 'complete_number'
  | 'base_timeout'
  | 'vendor_end_of_turn'
  | 'typed'
  | `extended: ${ExtendedWhy}`

/** How long to wait after the end of speech for the words so far, and whether the vendor's end of turn may end it. */
export interface TurnEndJudgement {
  readonly waitMs: number
  /** The reason recorded if the turn ends by this wait (an `extended:` reason may wait only `baseMs`, see `judge`). */
  readonly reason: TurnEndReason
  /** False when the words say more is coming: the vendor's end of turn is not taken, the wait decides. */
  readonly vendorMayEnd: boolean
}

/** The waits a judge chooses between (`turn_manager`'s fields). */
export interface TurnEndTimeouts {
  readonly baseMs: number
  readonly minMs: number
  readonly maxMs: number
}

/**
 * Reads the caller's words at the end of their speech and chooses the wait before the turn ends: longer
 * (`maxMs`) when the words stop mid-number or mid-sentence, shorter (`minMs`) after a complete short answer or
 * a complete number, `baseMs` otherwise. The bounds are clamped around `baseMs`, so a `min` above or a `max`
 * below the base never moves a turn the wrong way.
 */
export class TurnEndJudge {
  readonly #t: TurnEndTimeouts
  readonly #country: CountryCode

  constructor(timeouts: TurnEndTimeouts, country: CountryCode) {
    this.#t = {
      baseMs: timeouts.baseMs,
      minMs: Math.min(timeouts.minMs, timeouts.baseMs),
      maxMs: Math.max(timeouts.maxMs, timeouts.baseMs),
    }
    this.#country = country
  }

  /** The judgement for the words heard so far. */
  judge(text: string): TurnEndJudgement {
    const spoken = readSpoken(text)
    const number = trailingNumber(text, spoken, this.#country)
    if (number.state === 'incomplete') return this.#extend(number.why)
    const unfinished = unfinishedPhrase(spoken)
    if (unfinished !== undefined) return this.#extend(unfinished)
    if (unfinishedDate(spoken)) return this.#extend('incomplete_date')
    if (number.state === 'complete') return { waitMs: this.#t.minMs, reason: 'complete_number', vendorMayEnd: true }
    if (completeShortAnswer(spoken)) return { waitMs: this.#t.minMs, reason: 'complete_answer', vendorMayEnd: true }
    return { waitMs: this.#t.baseMs, reason: 'base_timeout', vendorMayEnd: true }
  }

  #extend(why: ExtendedWhy): TurnEndJudgement {
    // Digits or letters of unknown length (an account number, a name) may be complete: the base wait, not the longest.
    const waitMs = why === 'open_number' || why === 'spelling' ? this.#t.baseMs : this.#t.maxMs
    return { waitMs, reason: `extended: ${why}`, vendorMayEnd: false }
  }
}
