import { endsWithPhrase, type SpokenText } from './spoken-text.js'

// Words a finished sentence does not end on: conjunctions, prepositions, articles, possessives, a dangling verb.
const TRAILING_LINKS = new Set([
  'and',
  'or',
  'but',
  'so',
  'because',
  'cause',
  "'cause",
  'then',
  'if',
  'than',
  'that',
  'which',
  'who',
  'when',
  'where',
  'while',
  'with',
  'without',
  'of',
  'to',
  'for',
  'from',
  'at',
  'in',
  'on',
  'by',
  'about',
  'into',
  'the',
  'a',
  'an',
  'my',
  'your',
  'our',
  'their',
  'his',
  'her',
  'its',
  'is',
  'are',
  'was',
  'were',
  'be',
  'am',
  'like',
  'plus',
  'also',
])

// Hesitations: said while thinking, never the last thing of a finished answer.
const FILLER_WORDS = new Set(['um', 'umm', 'uh', 'uhh', 'er', 'erm', 'hmm', 'hm', 'ah', 'eh', 'mm', 'well'])
const FILLER_PHRASES = [
  'let me see',
  'let me think',
  'let me check',
  'let me look',
  'let me find it',
  'hold on',
  'hang on',
  'one second',
  'one moment',
  'just a second',
  'just a moment',
  'give me a second',
  'you know',
  'i mean',
  'how do i put it',
]

/** Why the words so far read as a sentence in progress, or undefined when they do not. */
export type UnfinishedWhy = 'trailing_conjunction' | 'filler' | 'open_list' | 'spelling'

const LETTER = /^[a-z]$/
const SPELLING_CUES = new Set(['spell', 'spelled', 'spelt', 'spelling', 'letters', 'name', 'initial', 'initials'])

/** Letters said one by one ("s, m, i, t, h"): after a cue word or another letter, a letter says more may follow. */
function spelling(words: readonly string[]): boolean {
  const last = words.at(-1)
  if (last === undefined || !LETTER.test(last)) return false
  const afterLetter = words.length >= 2 && LETTER.test(words.at(-2)!) && words.at(-2) !== 'a'
  // "a" and "i" are words too: only after another letter are they spelled.
  if (last === 'a' || last === 'i') return afterLetter
  return afterLetter || words.slice(-6, -1).some((w) => SPELLING_CUES.has(w))
}

/** Whether the text stops mid-sentence: on a linking word, a hesitation, a list left open or a word being spelled. */
export function unfinishedPhrase(text: SpokenText): UnfinishedWhy | undefined {
  const last = text.words.at(-1)
  if (last === undefined) return undefined
  if (FILLER_WORDS.has(last) || FILLER_PHRASES.some((p) => endsWithPhrase(text.words, p))) return 'filler'
  if (TRAILING_LINKS.has(last)) return 'trailing_conjunction'
  if (spelling(text.words)) return 'spelling'
  if (text.endsOnComma) return 'open_list'
  return undefined
}
