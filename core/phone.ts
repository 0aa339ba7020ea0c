import { parsePhoneNumberFromString } from 'libphonenumber-js'

/** A phone number in E.164 with its country when known. */
export interface NormalisedNumber {
  e164: string
  country: string | undefined
}

/**
 * Normalises a number to E.164. Input must be international (leading `+`, any spacing or punctuation) unless
 * a default country is given; numbers libphonenumber-js does not consider valid return undefined.
 */
export function normalisePhoneNumber(input: unknown, defaultCountry?: string): NormalisedNumber | undefined {
  if (typeof input !== 'string' || input.length > 64) return undefined
  const parsed = parsePhoneNumberFromString(input.trim(), defaultCountry as never)
  if (parsed === undefined || !parsed.isValid()) return undefined
  return { e164: parsed.number, country: parsed.country }
}
