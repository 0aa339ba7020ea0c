/**
 * Transcript text as turn rules read it: lower case, words only (an apostrophe and an inner hyphen kept, so "that's"
 * and "uh-huh" stay one word), and whether the text ends on a comma (a list or a thought left open).
 */
export interface SpokenText {
  readonly words: readonly string[]
  readonly endsOnComma: boolean
}

const WORD = /[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu

/** Reads `text` into its words. */
export function readSpoken(text: string): SpokenText {
  const t = text.trim()
  const words = (t.toLowerCase().match(WORD) ?? []).map((w) => w.replace('’', "'"))
  return { words, endsOnComma: /,\s*$/.test(t) }
}

/** The words of a phrase, hyphens read as spaces ("uh-huh" and "uh huh" are the same phrase). */
export function phraseKey(text: string): string {
  return readSpoken(text).words.join(' ').replaceAll('-', ' ')
}

/** True when `words` end with the words of `phrase` (already a phrase key). */
export function endsWithPhrase(words: readonly string[], phrase: string): boolean {
  const tail = phrase.split(' ')
  if (tail.length > words.length) return false
  const from = words.length - tail.length
  return tail.every((w, i) => words[from + i]!.replaceAll('-', ' ') === w)
}
