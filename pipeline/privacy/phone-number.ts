import { isPossiblePhoneNumber } from 'libphonenumber-js'

const NANP = /^[2-9]\d{2}[2-9]\d{6}$/

/**
 * True when `digits` are a phone number: with a "+" said before them, an E.164 number libphonenumber-js finds
 * possible for its country (length rules; validity rules would refuse test and fictional numbers); without it,
 * a North American number (10 digits, area and exchange codes not starting with 0 or 1, optionally after a 1)
 * or a national number with a trunk 0 (10 or 11 digits, as in the UK, France or Germany).
 */
export function isPhoneDigits(digits: string, plus: boolean): boolean {
  if (plus) return digits.length >= 8 && digits.length <= 15 && isPossiblePhoneNumber(`+${digits}`)
  if (digits.length === 11 && digits[0] === '1') return NANP.test(digits.slice(1))
  if (digits.length === 10 && NANP.test(digits)) return true
  return (digits.length === 10 || digits.length === 11) && digits[0] === '0' && digits[1] !== '0'
}
