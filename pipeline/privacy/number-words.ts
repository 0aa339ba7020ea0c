const UNITS: Readonly<Record<string, string>> = {
  zero: '0',
  nought: '0',
  oh: '0',
  o: '0',
  one: '1',
  two: '2',
  three: '3',
  four: '4',
  five: '5',
  six: '6',
  seven: '7',
  eight: '8',
  nine: '9',
}

const TEENS: Readonly<Record<string, string>> = {
  ten: '10',
  eleven: '11',
  twelve: '12',
  thirteen: '13',
  fourteen: '14',
  fifteen: '15',
  sixteen: '16',
  seventeen: '17',
  eighteen: '18',
  nineteen: '19',
}

const TENS: Readonly<Record<string, string>> = {
  twenty: '2',
  thirty: '3',
  forty: '4',
  fourty: '4',
  fifty: '5',
  sixty: '6',
  seventy: '7',
  eighty: '8',
  ninety: '9',
}

const REPEATS: Readonly<Record<string, number>> = { double: 2, triple: 3 }

// Said between digits without ending the number: "four one one one, uh, one one one one".
const FILLERS = new Set(['uh', 'um', 'umm', 'er', 'erm', 'hmm', 'ah'])

/** How a lower-case word reads inside a spoken number. */
export type NumberWord =
  | { readonly type: 'unit'; readonly digit: string; readonly weak: boolean }
  | { readonly type: 'teen'; readonly digits: string }
  | { readonly type: 'tens'; readonly digit: string }
  | { readonly type: 'repeat'; readonly times: number }
  | { readonly type: 'filler' }

/**
 * The reading of `word` (lower case) as part of a number, or undefined for any other word. "oh" and "o" are
 * weak: they read as zero only next to another number word, so "oh, my card" stays a word.
 */
export function readNumberWord(word: string): NumberWord | undefined {
  const unit = UNITS[word]
  if (unit !== undefined) return { type: 'unit', digit: unit, weak: word === 'oh' || word === 'o' }
  const teen = TEENS[word]
  if (teen !== undefined) return { type: 'teen', digits: teen }
  const tens = TENS[word]
  if (tens !== undefined) return { type: 'tens', digit: tens }
  const times = REPEATS[word]
  if (times !== undefined) return { type: 'repeat', times }
  if (FILLERS.has(word)) return { type: 'filler' }
  return undefined
}

/**
 * A word of the tokenizer's kind (a run of ASCII letters) that may read as part of a number, in any case. Text that
 * matches neither this nor a digit holds no digit run: a transcript without either skips the tokenizer.
 */
export const NUMBER_WORD = new RegExp(
  `(?<![A-Za-z])(?:${[...Object.keys(UNITS), ...Object.keys(TEENS), ...Object.keys(TENS), ...Object.keys(REPEATS)].join('|')})(?![A-Za-z])`,
  'i',
)
