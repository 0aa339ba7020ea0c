/**
 * Joins streamed LLM tokens into whole words before they are spoken: text is released up to and including the
 * last whitespace, so a TTS vendor never receives half a word ("Hel" + "lo"). A run without whitespace is
 * released once it reaches `maxChars`, which bounds the buffer.
 */
export class WordCoalescer {
  readonly #maxChars: number
  #buffer = ''

  constructor(maxChars = 200) {
    this.#maxChars = maxChars
  }

  /** Adds a token; returns the text that is ready to speak ('' when none). */
  push(token: string): string {
    this.#buffer += token
    const cut = lastWhitespaceEnd(this.#buffer)
    if (cut > 0) return this.#take(cut)
    if (this.#buffer.length >= this.#maxChars) return this.#take(this.#buffer.length)
    return ''
  }

  /** Returns whatever is held back (the last word). */
  flush(): string {
    return this.#take(this.#buffer.length)
  }

  #take(n: number): string {
    const out = this.#buffer.slice(0, n)
    this.#buffer = this.#buffer.slice(n)
    return out
  }
}

function lastWhitespaceEnd(text: string): number {
  for (let i = text.length - 1; i >= 0; i--) {
    if (/\s/.test(text[i] as string)) return i + 1
  }
  return 0
}
