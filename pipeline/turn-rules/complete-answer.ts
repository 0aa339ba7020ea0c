import type { SpokenText } from './spoken-text.js'

// Whole short answers: what a caller says to a yes/no or confirm question, and nothing more is coming.
const SHORT_ANSWERS = new Set([
  'yes',
  'no',
  'yeah',
  'yep',
  'yup',
  'nope',
  'nah',
  'sure',
  'correct',
  'right',
  'exactly',
  'absolutely',
  'definitely',
  'okay',
  'ok',
  'please',
  'yes please',
  'no thanks',
  'no thank you',
  'yes thank you',
  'thank you',
  'thanks',
  "that's right",
  'that is right',
  "that's correct",
  'that is correct',
  "that's it",
  "that's all",
  'that is all',
  "that's fine",
  'sounds good',
  'of course',
  'not really',
  'not at all',
  'i do',
  "i don't",
  'i did',
  "i didn't",
  'it is',
  "it's not",
  "it isn't",
  'goodbye',
  'bye',
])

// A date or an amount said in full ends on a day ("march fifth", "the fifth of march") or a currency word; a bare
// month is not taken (a day or a year usually follows it).
const DATE_OR_AMOUNT_END =
  /(\b\d+(st|nd|rd|th)|\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|[a-z]+teenth|twentieth|thirtieth)( of (january|february|march|april|may|june|july|august|september|october|november|december))?|\b(dollars?|euros?|pounds?|cents?|bucks))$/

/** True when the words are one of the short complete answers ("yes", "that's right"), a date or an amount. */
export function completeShortAnswer(text: SpokenText): boolean {
  if (text.words.length === 0 || text.words.length > 6) return false
  const key = text.words.join(' ')
  const core = key.replace(/^(oh |um |uh |well )+/, '').replace(/( please| thanks| thank you)$/, '')
  return SHORT_ANSWERS.has(key) || SHORT_ANSWERS.has(core) || DATE_OR_AMOUNT_END.test(key)
}
