import type { DigitGroup } from './digit-runs.js'
import { digitsOf } from './digit-groups.js'

// Published as examples (the Woolworth wallet card, an advertising number) and never issued.
const NEVER_ISSUED = new Set(['078051120', '219099999'])

const SSN_KEYWORD = /\b(ssn|s s n|social|social security|security number)\b/

/** SSA rules: area not 000, 666 or 9xx; group not 00; serial not 0000. */
export function isValidSsn(digits: string): boolean {
  if (!/^\d{9}$/.test(digits) || NEVER_ISSUED.has(digits)) return false
  const area = digits.slice(0, 3)
  return area !== '000' && area !== '666' && area[0] !== '9' && digits.slice(3, 5) !== '00' && digits.slice(5) !== '0000'
}

/**
 * True when `groups` are a social security number: grouped 3-2-4 as written or said ("123-45-6789", "one two
 * three, four five, six seven eight nine"), or any 9 digits right after "social" or "SSN". Nine ungrouped digits
 * with no keyword are an order or account number as often as an SSN, so they are left alone.
 */
export function isSsnGroups(groups: readonly DigitGroup[], context: string): boolean {
  const digits = digitsOf(groups)
  if (!isValidSsn(digits)) return false
  const shape = groups.map((g) => g.digits.length).join('-')
  return shape === '3-2-4' || SSN_KEYWORD.test(context)
}
