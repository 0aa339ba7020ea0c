/** True when a string of digits passes the Luhn (mod 10) check every payment card number carries. */
export function passesLuhn(digits: string): boolean {
  let sum = 0
  let double = false
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48
    if (d < 0 || d > 9) return false
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
    double = !double
  }
  return digits.length > 0 && sum % 10 === 0
}

/**
 * A Luhn-valid string of 13 to 19 digits whose first digit is a payment network's (ISO/IEC 7812 major industry
 * identifiers 2 to 6: Mastercard 2-series, Amex/Diners/JCB, Visa, Mastercard, Discover/UnionPay/Maestro).
 * The prefix rule halves the look-alikes (Luhn alone lets one random number in ten through).
 */
export function isCardNumber(digits: string): boolean {
  if (digits.length < 13 || digits.length > 19) return false
  const first = digits.charCodeAt(0) - 48
  return first >= 2 && first <= 6 && passesLuhn(digits)
}
