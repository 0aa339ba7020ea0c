import { monthStartBefore } from './card-extras.js'
import { detectSpans } from './detect-spans.js'
import { findDigitRuns, runStart } from './digit-runs.js'
import { ibanTail } from './iban.js'
import { applySpans, enabledSpans } from './redact.js'
import { type RedactOptions, resolveRedactOptions } from './redaction-options.js'
import type { RedactionSpan } from './redaction-span.js'
import { type PlacedWord, placeWords, type RedactedWord, type TimedWord, wordsInSpans } from './timed-words.js'

/** Most pushes a trailing number is held over before it is decided as it stands. */
export const MAX_HELD_PUSHES = 3
/** A trailing number with more digits than the longest card is decided at once. */
export const MAX_HELD_DIGITS = 19
/** A held tail longer than this many characters is decided at once (a bound on the buffer). */
export const MAX_HELD_CHARS = 400
// Raw text kept from the decided part so keywords said just before a held number ("my social is") still count.
const CONTEXT_CHARS = 64

/**
 * A decided piece of the stream. The stream's text is the pushed segments joined by one space (as the STT's
 * finals of a turn are); the pieces' `text`, concatenated, are that text redacted. Span offsets are in the
 * stream's input and output texts.
 */
export interface RedactedPiece {
  readonly text: string
  readonly spans: readonly RedactionSpan[]
  /** The timed words (given with `push`) that were redacted, to silence the recording over. */
  readonly words: readonly RedactedWord[]
  /** How much of the stream's input is decided after this piece (an offset in the input; the rest is held). */
  readonly decidedTo: number
}

/** Redacts text that arrives in pieces, holding a trailing number until it can be read whole. */
export interface StreamingRedactor {
  /** Adds one STT segment (optionally with its timed words) and returns what can be decided now. */
  push(segment: string, words?: readonly TimedWord[]): RedactedPiece
  /** Decides whatever is held (end of the session or of the stored transcript). */
  flush(): RedactedPiece
}

/**
 * The streaming form of `redact`. Rule: when the text so far ends in a number (digits or number words, with
 * only separators after it) of at most {@link MAX_HELD_DIGITS} digits, that number is held back and read again
 * with the next segment, so "4111 1111" then "1111 1111" is one card. A held number is decided when a word
 * follows it, when it grows past 19 digits, after {@link MAX_HELD_PUSHES} pushes, or on `flush()`. Everything
 * before it is emitted at once. A code or expiry counts near a card: in the same push or the next one.
 * Only stored text waits: the agent's webhook never goes through this.
 */
export function createRedactor(options: RedactOptions = {}): StreamingRedactor {
  const resolved = resolveRedactOptions(options)
  let buffer = ''
  let bufferWords: PlacedWord[] = []
  let started = false
  let context = ''
  let inputOffset = 0
  let outputOffset = 0
  let heldPushes = 0
  let pushesSinceCard = Number.POSITIVE_INFINITY

  const decide = (length: number): RedactedPiece => {
    if (length === 0) return { text: '', spans: [], words: [], decidedTo: inputOffset }
    const piece = buffer.slice(0, length)
    const detection = detectSpans(context + piece, { cardBefore: pushesSinceCard <= 1, from: context.length })
    if (detection.cardSeen) pushesSinceCard = 0
    const own = detection.spans
      .filter((s) => s.start >= context.length)
      .map((s) => ({ ...s, start: s.start - context.length, end: s.end - context.length }))
    const result = applySpans(piece, enabledSpans(own, resolved), resolved)
    const spans = result.spans.map((s) => ({
      ...s,
      start: s.start + inputOffset,
      end: s.end + inputOffset,
      outputStart: s.outputStart + outputOffset,
      outputEnd: s.outputEnd + outputOffset,
    }))
    const decidedWords = bufferWords.filter((w) => w.start < inputOffset + length)
    bufferWords = bufferWords.filter((w) => w.start >= inputOffset + length)
    inputOffset += length
    outputOffset += result.text.length
    context = (context + piece).slice(-CONTEXT_CHARS)
    buffer = buffer.slice(length)
    return { text: result.text, spans, words: wordsInSpans(decidedWords, spans), decidedTo: inputOffset }
  }

  // Where the held tail starts in the buffer, or the buffer's length when nothing is held.
  const heldFrom = (): number => {
    const full = context + buffer
    const last = findDigitRuns(full).at(-1)
    const iban = ibanTail(full)
    let start = Number.POSITIVE_INFINITY
    // A complete IBAN is decided now, its digits are not a number that may go on.
    if (iban?.complete !== true && last?.open === true && last.groups.reduce((n, g) => n + g.digits.length, 0) <= MAX_HELD_DIGITS) {
      // A month name said before the number goes with it: "expires april" + "twenty twenty seven".
      start = last.plusAt ?? monthStartBefore(full, runStart(last)) ?? runStart(last)
    }
    if (iban?.complete === false) start = Math.min(start, iban.start)
    start -= context.length
    if (!Number.isFinite(start) || start < 0 || heldPushes >= MAX_HELD_PUSHES || buffer.length - start > MAX_HELD_CHARS) {
      return buffer.length
    }
    return start
  }

  return {
    push(segment, words = []) {
      const separator = started ? ' ' : ''
      started = true
      bufferWords.push(...placeWords(segment, words, inputOffset + buffer.length + separator.length))
      buffer += separator + segment
      pushesSinceCard++
      const held = heldFrom()
      heldPushes = held < buffer.length ? heldPushes + 1 : 0
      return decide(held)
    },
    flush() {
      heldPushes = 0
      return decide(buffer.length)
    },
  }
}

/** The words of one utterance that a redaction covers, and the text redacted: for silencing a recording. */
export function redactWords(words: readonly TimedWord[], options: RedactOptions = {}): RedactedPiece {
  const redactor = createRedactor(options)
  const text = words.map((w) => w.word).join(' ')
  const first = redactor.push(text, words)
  const rest = redactor.flush()
  return {
    text: first.text + rest.text,
    spans: [...first.spans, ...rest.spans],
    words: [...first.words, ...rest.words],
    decidedTo: rest.decidedTo,
  }
}
