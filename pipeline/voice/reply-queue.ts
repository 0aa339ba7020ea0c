import type { UserEnd } from './assistant-turn.js'
import { joinSpeech } from './data-relay.js'
import type { UserTurn } from './user-turn.js'

/** User turns said over a reply that may not be interrupted, kept apart to be announced after it. */
const MAX_HELD_TURNS = 20

/** Words to answer once the reply in progress is over, with the user turns that said them. */
export interface HeldWords {
  text: string
  userEnd: UserEnd
  turns: { turn: UserTurn; text: string }[]
}

/** A machine detection verdict, asked of the agent like a turn. */
export type MachineVerdictRequest =
  | { kind: 'machine_detection'; turnId: string; answeredBy: string }
  /** A failed warm transfer, asked of the agent like a turn (it waits the same way). */
  | { kind: 'transfer_failed'; turnId: string; reason: string; to: string; defaultLine?: string | undefined }

/** Speech from data replies, spoken as an assistant turn of its own. */
export interface HeldSpeech {
  text: string
  hangup: boolean
}

/**
 * What waits for the reply in progress to be over: the user's words said while it could not be interrupted (and
 * their turns, announced only once it has been heard), a machine detection verdict, and speech from data replies.
 * Bounded: speech joins into one, and beyond MAX_HELD_TURNS a turn's words join the last held turn's.
 */
export class ReplyQueue {
  #words: HeldWords | undefined
  #verdict: MachineVerdictRequest | undefined
  #speech: HeldSpeech | undefined

  /** Holds `text` (and its turn, if it is to be announced later) behind the words already waiting. */
  holdWords(text: string, userEnd: UserEnd, turn?: UserTurn): void {
    const turns = this.#words?.turns ?? []
    if (turn !== undefined) {
      // Bounded: beyond MAX_HELD_TURNS, a turn's words join the last held turn's (each turn is announced once).
      const last = turns.at(-1)
      if (turns.length >= MAX_HELD_TURNS && last !== undefined) last.text = `${last.text} ${text}`
      else turns.push({ turn, text })
    }
    this.#words = { text: this.#words ? `${this.#words.text} ${text}` : text, userEnd, turns }
  }

  /** Holds a machine detection verdict until the reply is over (a newer one replaces it). */
  holdVerdict(request: MachineVerdictRequest): void {
    this.#verdict = request
  }

  /** Holds speech from a data reply, joined to any already waiting; a hangup anywhere in it is kept. */
  holdSpeech(text: string, hangup: boolean): void {
    const q = this.#speech
    this.#speech = { text: joinSpeech(q?.text ?? '', text), hangup: hangup || (q?.hangup ?? false) }
  }

  /** The held words, now no longer held. */
  takeWords(): HeldWords | undefined {
    const words = this.#words
    this.#words = undefined
    return words
  }

  /** The held verdict, now no longer held. */
  takeVerdict(): MachineVerdictRequest | undefined {
    const verdict = this.#verdict
    this.#verdict = undefined
    return verdict
  }

  /** The held speech, now no longer held. */
  takeSpeech(): HeldSpeech | undefined {
    const speech = this.#speech
    this.#speech = undefined
    return speech
  }
}
