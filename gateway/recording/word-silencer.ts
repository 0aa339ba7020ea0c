import { createRedactor, type StreamingRedactor, type RedactionSwitches, type RedactedWord, type TimedWord } from '../../pipeline/index.js'

/**
 * The caller's timed STT words of a whole session as one stream through the redactor, so a card number
 * said across two segments or two turns is found, and its words silenced in the recording. It runs beside the
 * transcript's redaction (which reads the turns' text): the words are what the recording is timed by.
 */
export class WordSilencer {
  readonly #redactor: StreamingRedactor
  readonly #silence: (words: readonly RedactedWord[]) => void

  constructor(switches: Readonly<RedactionSwitches>, silence: (words: readonly RedactedWord[]) => void) {
    this.#redactor = createRedactor({ redact: switches })
    this.#silence = silence
  }

  /** One STT segment's words (seconds of the caller's audio). */
  push(words: readonly TimedWord[]): void {
    if (words.length === 0) return
    const piece = this.#redactor.push(words.map((w) => w.word).join(' '), words)
    if (piece.words.length > 0) this.#silence(piece.words)
  }

  /** Decides a number still held (a pause, the session's end). */
  flush(): void {
    const piece = this.#redactor.flush()
    if (piece.words.length > 0) this.#silence(piece.words)
  }
}
