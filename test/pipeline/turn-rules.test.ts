import t from 'tap'
import { BackchannelList, DEFAULT_BACKCHANNELS } from '../../pipeline/turn-rules/backchannels.js'
import { callerCountry } from '../../pipeline/turn-rules/caller-country.js'
import { readSpoken } from '../../pipeline/turn-rules/spoken-text.js'
import { trailingNumber } from '../../pipeline/turn-rules/trailing-number.js'
import { TurnEndJudge } from '../../pipeline/turn-rules/turn-end-judge.js'
import { unfinishedPhrase } from '../../pipeline/turn-rules/unfinished-phrase.js'

const TIMES = { baseMs: 2000, minMs: 300, maxMs: 4000 }
const us = new TurnEndJudge(TIMES, 'US')
const reason = (judge: TurnEndJudge, text: string) => judge.judge(text).reason

t.test('card numbers: short of a valid length waits, a Luhn-valid full number ends sooner', async (t) => {
  t.equal(reason(us, 'my card number is four five three two'), 'extended: incomplete_number')
  t.equal(reason(us, 'my card number is 4532 0151 1283'), 'extended: incomplete_number', '12 digits')
  t.equal(reason(us, 'my card number is 4532 0151 1283 0366'), 'complete_number', '16 digits, Luhn-valid')
  t.equal(
    reason(us, 'the card is 4532 0151 1283 0367'),
    'extended: incomplete_number',
    '16 digits failing Luhn: a digit misheard or more to come',
  )
  t.equal(reason(us, 'card number 3782 822463 10005'), 'complete_number', 'a 15-digit Amex')
  t.equal(reason(us, 'my card number is'), 'extended: awaiting_number', 'announced, no digits yet')
})

t.test('phone numbers are judged by the caller country numbering plan', async (t) => {
  t.equal(reason(us, 'my phone number is five five five'), 'extended: incomplete_number')
  t.equal(reason(us, 'my number is 415 555'), 'extended: incomplete_number')
  t.equal(reason(us, 'my number is 415 555 0134'), 'complete_number', 'ten digits in the US')
  t.equal(reason(us, 'my number is'), 'extended: awaiting_number')
  t.equal(reason(us, 'my number is uh'), 'extended: awaiting_number')
  const gb = new TurnEndJudge(TIMES, 'GB')
  t.equal(reason(gb, 'my number is 020 7183'), 'extended: incomplete_number', 'a London number needs 11 digits')
  t.equal(reason(gb, 'my number is 020 7183 8750'), 'complete_number')
  const de = new TurnEndJudge(TIMES, 'DE')
  t.equal(reason(de, 'meine nummer, my number is 030 12'), 'extended: incomplete_number', 'Berlin, too short')
  t.equal(reason(us, 'call me on plus 44 20 7183'), 'extended: incomplete_number', 'a + number uses its own country')
  t.equal(reason(us, 'call me on plus 44 20 7183 8750'), 'complete_number')
  t.equal(trailingNumber('my account number is 1234 5678', readSpoken('my account number is 1234 5678'), 'US').state, 'incomplete')
  t.same(
    us.judge('my account number is 1234 5678'),
    { waitMs: 2000, reason: 'extended: open_number', vendorMayEnd: false },
    'unknown length: the base wait, but the vendor may not end it',
  )
  t.equal(reason(us, 'I am 42'), 'base_timeout', 'a lone number with no cue is no number being read out')
})

t.test("the caller's country: their own number, else default_country", async (t) => {
  t.equal(callerCountry('+442071838750', 'US'), 'GB')
  t.equal(callerCountry(undefined, 'DE'), 'DE')
  t.equal(callerCountry('anonymous', 'FR'), 'FR')
  t.equal(callerCountry(undefined, 'ZZ'), 'US', 'an unknown fallback is the US')
})

t.test('fillers, trailing conjunctions and open lists wait longer', async (t) => {
  const why = (text: string) => unfinishedPhrase(readSpoken(text))
  t.equal(why('I would like to um'), 'filler')
  t.equal(why('so the problem is, let me see'), 'filler')
  t.equal(why('Hold on.'), 'filler')
  t.equal(why('I called yesterday and'), 'trailing_conjunction')
  t.equal(why('it was about my'), 'trailing_conjunction')
  t.equal(why('I need eggs, milk,'), 'open_list')
  t.equal(why('my last name is smith s'), 'spelling')
  t.equal(why('s m i t'), 'spelling')
  t.equal(why('smith s m i'), 'spelling', '"i" after a letter is spelled')
  t.equal(why('what do i'), undefined, '"i" after a word is a word')
  t.equal(why('it is spelled n'), 'spelling')
  t.equal(why('plan b'), undefined, 'one letter after a word is not spelling')
  t.equal(why('I called yesterday.'), undefined)
  t.equal(why(''), undefined)
  t.same(us.judge('I need to change my flight because'), { waitMs: 4000, reason: 'extended: trailing_conjunction', vendorMayEnd: false })
})

t.test('complete short answers, dates and amounts end sooner; anything else waits the base time', async (t) => {
  for (const text of [
    'Yes.',
    'no',
    "That's right.",
    'yes please',
    'uh, correct',
    'March fifth',
    'the fifth of march',
    'two hundred dollars',
  ]) {
    t.same(us.judge(text), { waitMs: 300, reason: 'complete_answer', vendorMayEnd: true }, text)
  }
  t.equal(reason(us, 'I was wondering whether you could help me with my bill'), 'base_timeout')
  t.equal(reason(us, 'yes and'), 'extended: trailing_conjunction', 'a yes that goes on is not a complete answer')
  t.equal(reason(us, 'my date of birth is the fourteenth of march'), 'extended: incomplete_date', 'a birth date waits for its year')
  t.equal(reason(us, 'it expires in october'), 'extended: incomplete_date', 'an expiry too')
  t.equal(reason(us, 'my date of birth is the fourteenth of march nineteen eighty two'), 'base_timeout')
  t.equal(reason(us, 'the meeting is on march fifth'), 'complete_answer', 'a date that needs no year is complete')
  t.equal(reason(us, "that's the truth"), 'base_timeout', 'a word ending in -th is no day')
  t.same(us.judge('my name is smith s m'), { waitMs: 2000, reason: 'extended: spelling', vendorMayEnd: false }, 'spelling: the base wait')
})

t.test('bounds: min never above the base, max never below it', async (t) => {
  const odd = new TurnEndJudge({ baseMs: 1000, minMs: 1500, maxMs: 800 }, 'US')
  t.equal(odd.judge('yes').waitMs, 1000, 'min_timeout_ms above the base acts as the base')
  t.equal(odd.judge('my number is').waitMs, 1000, 'max_timeout_ms below the base acts as the base')
  const zero = new TurnEndJudge({ baseMs: 2000, minMs: 0, maxMs: 10000 }, 'US')
  t.equal(zero.judge('no').waitMs, 0)
  t.equal(zero.judge('and').waitMs, 10000)
})

t.test('backchannels: only listener phrases, per language, with English by default', async (t) => {
  const en = BackchannelList.forLanguage(DEFAULT_BACKCHANNELS, 'en-US')
  for (const text of ['uh-huh', 'Uh huh.', 'mm-hm', 'Yeah.', 'okay', 'right', 'yeah, okay', 'mhm mhm', 'All right.'])
    t.ok(en.matches(text), text)
  for (const text of ['no, wait', 'stop', 'yeah but what about my refund', 'what time do you close', '']) t.notOk(en.matches(text), text)
  t.notOk(en.matches('i'), '"i" alone is no backchannel')
  t.ok(en.mayBe('i'), 'but may be the start of "i see"')
  t.ok(en.mayBe('yeah got'), 'or of "yeah, got it"')
  t.notOk(en.mayBe('i want'), 'the next word decides')
  const lists = { en: ['yeah'], es: ['sí', 'vale', 'ajá'] }
  t.ok(BackchannelList.forLanguage(lists, 'es').matches('Vale, sí.'), 'the language own list')
  t.notOk(BackchannelList.forLanguage(lists, 'es').matches('yeah'), 'not the English one')
  t.ok(BackchannelList.forLanguage(lists, 'multi').matches('yeah'), 'no list for the language: English')
  t.ok(BackchannelList.forLanguage({ en: [] }, 'en').empty, 'an empty list turns the rule off')
})
