import { type CountryCode, isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js'

/** The caller's country for phone-number rules: their own number's, else `fallback`, else the US. */
export function callerCountry(fromPhoneNumber: string | undefined, fallback: string): CountryCode {
  const own = fromPhoneNumber === undefined ? undefined : parsePhoneNumberFromString(fromPhoneNumber)?.country
  if (own !== undefined) return own
  return isSupportedCountry(fallback) ? fallback : 'US'
}
