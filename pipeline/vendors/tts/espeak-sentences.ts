/**
 * A sentence ends at `. ! ? ; :` (optionally followed by closing quotes or brackets) when whitespace follows, or at
 * a newline. Requiring the whitespace keeps `3.14` and `example.com` whole while the text is still streaming in.
 */
const BOUNDARY = /[.!?;:]+["')\]]*\s+|\n+/g

/**
 * Text without a boundary is cut at a space or comma past this length, so one synthesis call (which blocks the
 * event loop) stays short and the first audio of a run-on sentence is not late.
 */
export const MAX_SENTENCE_CHARS = 300

/** Complete sentences at the start of `text` and the incomplete remainder. */
export interface SentenceSplit {
  sentences: string[]
  rest: string
}

/**
 * Split streamed text into the sentences ready to speak. With `final` (the context was flushed) the remainder is a
 * sentence too. Whitespace-only pieces are dropped. Pure.
 */
export function splitSentences(text: string, final = false): SentenceSplit {
  const sentences: string[] = []
  let start = 0
  for (const match of text.matchAll(BOUNDARY)) {
    const end = match.index + match[0].length
    pushLimited(sentences, text.slice(start, end))
    start = end
  }
  let rest = text.slice(start)
  while (rest.length > MAX_SENTENCE_CHARS) {
    const cut = cutPoint(rest)
    pushLimited(sentences, rest.slice(0, cut))
    rest = rest.slice(cut)
  }
  if (final) {
    pushLimited(sentences, rest)
    rest = ''
  }
  return { sentences, rest }
}

function pushLimited(out: string[], piece: string): void {
  let remaining = piece
  while (remaining.length > MAX_SENTENCE_CHARS) {
    const cut = cutPoint(remaining)
    push(out, remaining.slice(0, cut))
    remaining = remaining.slice(cut)
  }
  push(out, remaining)
}

function push(out: string[], piece: string): void {
  const trimmed = piece.trim()
  if (trimmed.length > 0) out.push(trimmed)
}

/** Where to cut an over-long piece: after the last comma, else the last space, within the limit. */
function cutPoint(text: string): number {
  const window = text.slice(0, MAX_SENTENCE_CHARS)
  const comma = window.lastIndexOf(', ')
  if (comma > MAX_SENTENCE_CHARS / 3) return comma + 2
  const space = window.lastIndexOf(' ')
  return space > 0 ? space + 1 : MAX_SENTENCE_CHARS
}
