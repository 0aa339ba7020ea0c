/**
 * The time zone of a person to call: the one given for them, else the one their number's country has when it
 * has only one (tzdata's zone.tab, via libphonenumber-js's country), else the campaign's default. A country
 * with several zones (US, CA, BR, RU, AU, MX, ...) is ambiguous from its number alone.
 */
import { COUNTRY_TIME_ZONES } from './country-time-zones.js'

/** Where a contact's zone came from. */
export type TimeZoneSource = 'contact' | 'number' | 'default'

/** Picks the zone as above; `explicit` must already be checked as a known zone. */
export function contactTimeZone(
  country: string | undefined,
  explicit: string | undefined,
  campaignDefault: string,
): { timeZone: string; source: TimeZoneSource } {
  if (explicit !== undefined) return { timeZone: explicit, source: 'contact' }
  const fromNumber = country === undefined ? undefined : COUNTRY_TIME_ZONES.get(country)
  if (fromNumber !== undefined) return { timeZone: fromNumber, source: 'number' }
  return { timeZone: campaignDefault, source: 'default' }
}
