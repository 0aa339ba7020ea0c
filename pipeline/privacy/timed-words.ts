import type { RedactionKind } from './redaction-options.js'
import type { RedactionSpan } from './redaction-span.js'

/** A word as an STT vendor times it, in seconds from the start of the caller's audio. */
export interface TimedWord {
  readonly word: string
  readonly start: number
  readonly end: number
}

/** A word that lies (partly) inside a redacted span: the recording is silenced over it. */
export interface RedactedWord extends TimedWord {
  readonly kind: RedactionKind
}

/** A word placed in a text: its offsets (end exclusive). */
export interface PlacedWord {
  readonly word: TimedWord
  readonly start: number
  readonly end: number
}

/**
 * Finds each word in `text` from `offset` on, in order; a word the text does not contain (the vendor's
 * punctuated form differs) is skipped rather than misplaced.
 */
export function placeWords(text: string, words: readonly TimedWord[], offset: number): PlacedWord[] {
  const placed: PlacedWord[] = []
  let at = 0
  for (const word of words) {
    const i = text.indexOf(word.word, at)
    if (i < 0 || word.word.length === 0) continue
    placed.push({ word, start: offset + i, end: offset + i + word.word.length })
    at = i + word.word.length
  }
  return placed
}

/** The placed words that overlap a span, each with the span's kind. */
export function wordsInSpans(words: readonly PlacedWord[], spans: readonly RedactionSpan[]): RedactedWord[] {
  const out: RedactedWord[] = []
  for (const w of words) {
    const s = spans.find((span) => w.start < span.end && span.start < w.end)
    if (s !== undefined) out.push({ ...w.word, kind: s.kind })
  }
  return out
}
