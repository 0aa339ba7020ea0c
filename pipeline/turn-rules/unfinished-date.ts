import type { SpokenText } from './spoken-text.js'

const MONTHS = new Set([
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
])
const ORDINAL =
  /^(\d+(st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|[a-z]+teenth|twentieth|thirtieth|twenty-\w+|thirty-first)$/
// Dates that need a year: a birth date and a card's expiry.
const NEEDS_YEAR = new Set(['birth', 'born', 'dob', 'expires', 'expiry', 'expiration'])

/**
 * A date said without its year yet, where one is needed ("my date of birth is the fourteenth of march", "it expires
 * in october"): the words end on a month or a day after a cue that asks for a year.
 */
export function unfinishedDate(text: SpokenText): boolean {
  const last = text.words.at(-1)
  if (last === undefined || !(MONTHS.has(last) || ORDINAL.test(last))) return false
  return text.words.some((w) => NEEDS_YEAR.has(w))
}
