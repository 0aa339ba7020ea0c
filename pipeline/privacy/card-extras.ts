import type { DigitGroup } from './digit-runs.js'
import { digitsOf } from './digit-groups.js'
import type { DetectedSpan } from './redaction-span.js'

const EXPIRY_WORD = /(expir\w*|\bexp\b|valid (thru|through|until)|good (thru|through))/g
const CODE_WORD =
  /(\bcvc\d?\b|\bcvv\d?\b|\bcid\b|security code|security number|code on the back|verification|(three|four|3|4)[- ]digit|\bcode\b)/g
const MONTHS =
  'jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?'
const MONTH_BEFORE = new RegExp(`\\b(${MONTHS})\\s+(?:of\\s+)?$`, 'i')
const SLASH_EXPIRY = /(?<![\d/])(0?[1-9]|1[0-2])\s?\/\s?(\d{2}|20\d{2})(?![\d/])/g

function lastIndexOf(re: RegExp, text: string): number {
  let last = -1
  for (const m of text.matchAll(re)) last = m.index
  return last
}

/** Which card detail the text before a number names, by the last keyword said. */
function namedDetail(context: string): 'expiry' | 'cvc' | undefined {
  const expiry = lastIndexOf(EXPIRY_WORD, context)
  const code = lastIndexOf(CODE_WORD, context)
  if (expiry < 0 && code < 0) return undefined
  return expiry > code ? 'expiry' : 'cvc'
}

/** Month and year as MYY, MMYY or MMYYYY ("four twenty seven", "12 28", "oh four twenty twenty seven"). */
export function isExpiryDigits(digits: string): boolean {
  const month = digits.length === 3 ? Number(digits.slice(0, 1)) : Number(digits.slice(0, 2))
  if (digits.length === 6 && !digits.startsWith('20', 2)) return false
  return [3, 4, 6].includes(digits.length) && month >= 1 && month <= 12
}

/**
 * A card's security code or expiry among `groups`, said near a card number. Named ones ("expires", "security
 * code") count anywhere near; unnamed ones only right after the card in the same run: 3 digits are a code,
 * 4 a month and year when they read as one (else an Amex code), and "12 28 123" an expiry then a code.
 */
export function findCardExtras(groups: readonly DigitGroup[], context: string, afterCard: boolean): DetectedSpan[] {
  const span = (kind: 'cvc' | 'expiry', from: number, to: number): DetectedSpan => {
    const last = groups[to - 1]!
    return { kind, start: groups[from]!.ranges[0]![0], end: last.ranges[last.ranges.length - 1]![1] }
  }
  const digits = digitsOf(groups)
  const named = namedDetail(context)
  const month = MONTH_BEFORE.exec(context)
  if (month !== null && named === 'expiry' && (digits.length === 2 || (digits.length === 4 && digits.startsWith('20')))) {
    const start = groups[0]!.ranges[0]![0] - (context.length - month.index)
    return [{ ...span('expiry', 0, groups.length), start }]
  }
  if (named === 'expiry' && isExpiryDigits(digits)) return [span('expiry', 0, groups.length)]
  if (named === 'cvc' && (digits.length === 3 || digits.length === 4)) return [span('cvc', 0, groups.length)]
  if (named === undefined && afterCard) {
    if (digits.length === 3) return [span('cvc', 0, groups.length)]
    if (digits.length === 4) return [span(isExpiryDigits(digits) ? 'expiry' : 'cvc', 0, groups.length)]
  }
  if (named !== 'cvc' && (named === 'expiry' || afterCard)) {
    // Expiry then code in one breath: cut at a group boundary.
    let length = 0
    for (let cut = 1; cut < groups.length; cut++) {
      length += groups[cut - 1]!.digits.length
      const rest = digits.length - length
      if (isExpiryDigits(digits.slice(0, length)) && (rest === 3 || rest === 4))
        return [span('expiry', 0, cut), span('cvc', cut, groups.length)]
    }
  }
  return []
}

/** Written expiry dates ("12/28", "12 / 2028") anywhere in a text said near a card number. */
export function findSlashExpiries(text: string): DetectedSpan[] {
  const spans: DetectedSpan[] = []
  for (const m of text.matchAll(SLASH_EXPIRY)) spans.push({ kind: 'expiry', start: m.index, end: m.index + m[0].length })
  return spans
}

/** Where a month name said right before `offset` starts ("april twenty twenty seven"), or undefined. */
export function monthStartBefore(text: string, offset: number): number | undefined {
  const m = MONTH_BEFORE.exec(text.slice(Math.max(0, offset - 16), offset))
  return m === null ? undefined : Math.max(0, offset - 16) + m.index
}
