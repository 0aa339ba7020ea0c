import { type CountryCode, isValidPhoneNumber, validatePhoneNumberLength } from 'libphonenumber-js'
import { findDigitRuns } from '../privacy/digit-runs.js'
import { isCardNumber } from '../privacy/luhn.js'
import type { SpokenText } from './spoken-text.js'

/** What kind of number the caller is giving, from the words said before it. */
export type NumberKind = 'card' | 'phone' | 'other'

/** The number at the end of what the caller said: complete, still being read out, or none. */
export type TrailingNumber =
  | { readonly state: 'complete'; readonly kind: NumberKind }
  | { readonly state: 'incomplete'; readonly kind: NumberKind; readonly why: 'incomplete_number' | 'awaiting_number' | 'open_number' }
  | { readonly state: 'none' }

const CARD_CUES = /\b(card|credit|debit|visa|mastercard|amex|american express|discover)\b/
const PHONE_CUES = /\b(phone|cell|mobile|telephone|landline|call me|reach me|call back|callback|contact number)\b/
const OTHER_CUES =
  /\b(account|member|membership|policy|order|confirmation|reference|routing|tracking|case|ticket|customer|zip|postal|postcode|pin|id|social|ssn)\b/

// "my number is", "the card number's", "it's" right after a cue: a number was announced and none came yet.
const ANNOUNCED =
  /\b(number|numbers|digits|card|account|phone|code|zip|id)( number)?(( is|'s| was| are)( uh| um| it's)*)?(,)?$|\b(number|card|account|phone) is (uh|um|it's)$/

/** Digits a card number has at most (ISO/IEC 7812). */
const CARD_MAX = 19
/** A card number shorter than this is still being read (the common lengths are 15 and 16). */
const CARD_COMMON = 15

function kindBefore(context: string): NumberKind | undefined {
  if (CARD_CUES.test(context)) return 'card'
  if (PHONE_CUES.test(context)) return 'phone'
  if (OTHER_CUES.test(context)) return 'other'
  if (/\bnumber\b/.test(context)) return 'phone'
  return undefined
}

/** A phone number that more digits could still make valid, for `country`'s numbering plan. */
function phoneIncomplete(digits: string, plus: boolean, country: CountryCode): boolean {
  const n = plus ? `+${digits}` : digits
  const length = plus ? validatePhoneNumberLength(n) : validatePhoneNumberLength(n, country)
  if (length === 'TOO_SHORT' || length === 'NOT_A_NUMBER') return true
  if (length !== undefined) return false
  if (plus ? isValidPhoneNumber(n) : isValidPhoneNumber(n, country)) return false
  // Possible but not valid (a fictional 555 number, or a prefix of a longer one): incomplete while a digit more fits.
  const longer = plus ? validatePhoneNumberLength(`${n}0`) : validatePhoneNumberLength(`${n}0`, country)
  return longer === undefined
}

/**
 * Reads the end of the caller's words for a number: digits said as numerals or number words, in groups, with the
 * words before them saying what it is. A card number short of a valid length, a phone number `country`'s plan says is
 * too short, a cue with no digits after it ("my number is") and digits of unknown length (an account number) are
 * incomplete; a Luhn-valid card number or a full phone number is complete.
 */
export function trailingNumber(text: string, spoken: SpokenText, country: CountryCode): TrailingNumber {
  const joined = spoken.words.join(' ')
  const runs = findDigitRuns(text)
  const last = runs.at(-1)
  if (last === undefined || !last.open) {
    if (ANNOUNCED.test(joined) && kindBefore(joined) !== undefined) {
      return { state: 'incomplete', kind: kindBefore(joined) ?? 'other', why: 'awaiting_number' }
    }
    return { state: 'none' }
  }
  const start = last.groups[0]!.ranges[0]![0]
  const context = text.slice(Math.max(0, start - 80), start).toLowerCase()
  const kind = kindBefore(context)
  const digits = last.groups.map((g) => g.digits).join('')
  if (kind === 'card') {
    // Luhn-valid at 13 or 14 digits is rare and those cards are rarer: below the common lengths, keep listening.
    const complete = digits.length >= CARD_MAX || (digits.length >= CARD_COMMON && isCardNumber(digits))
    return complete ? { state: 'complete', kind } : { state: 'incomplete', kind, why: 'incomplete_number' }
  }
  if (kind === 'phone' || (kind === undefined && (last.plusAt !== undefined || last.groups.length > 1))) {
    return phoneIncomplete(digits, last.plusAt !== undefined, country)
      ? { state: 'incomplete', kind: 'phone', why: 'incomplete_number' }
      : { state: 'complete', kind: 'phone' }
  }
  if (kind === 'other') return { state: 'incomplete', kind, why: 'open_number' }
  return { state: 'none' }
}
