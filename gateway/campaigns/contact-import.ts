/**
 * Checking a batch of contacts, from JSON or CSV: each row is taken or reported with its row number and why,
 * never failing the batch. Pure; the store adds the rows taken (and reports numbers the campaign already has).
 */
import { isKnownTimeZone } from '../../core/calling-window.js'
import { parseCsv } from '../../core/csv.js'
import { contactTimeZone } from '../../core/number-time-zone.js'
import { normalisePhoneNumber } from '../../core/phone.js'
import type { NewContact } from '../store/campaign-contacts.js'

/** Most bytes of one contact's custom_metadata as JSON. */
export const MAX_CONTACT_METADATA_BYTES = 2048

/** One row as given: a JSON contact, or a CSV line mapped by its header. */
export interface ContactInput {
  readonly phone_number?: unknown
  readonly timezone?: unknown
  readonly custom_metadata?: unknown
}

/** A row refused, with its 1-based row number in the batch (a CSV's header is row 0). */
export interface RowError {
  readonly row: number
  readonly phone_number: string | null
  readonly error: string
}

/** The rows taken and those refused. */
export interface CheckedBatch {
  readonly contacts: NewContact[]
  readonly errors: RowError[]
}

/** Checks `rows`; a contact without its own zone gets its number's, else `defaultTimezone`. */
export function checkContacts(rows: readonly ContactInput[], defaultTimezone: string): CheckedBatch {
  const contacts: NewContact[] = []
  const errors: RowError[] = []
  const seen = new Map<string, number>()
  for (const [i, input] of rows.entries()) {
    const error = checkRow(input, i + 1, seen, defaultTimezone, contacts)
    if (error !== undefined) {
      const raw = input !== null && typeof input === 'object' && typeof input.phone_number === 'string' ? input.phone_number : null
      errors.push({ row: i + 1, phone_number: raw?.slice(0, 64) ?? null, error })
    }
  }
  return { contacts, errors }
}

/** Takes one row into `contacts`, or says why not. */
function checkRow(
  input: ContactInput,
  row: number,
  seen: Map<string, number>,
  defaultTimezone: string,
  contacts: NewContact[],
): string | undefined {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return 'not an object'
  const number = normalisePhoneNumber(input.phone_number)
  if (number === undefined) return 'phone_number is not a valid phone number in international form (+ and country code)'
  const zone = input.timezone === undefined || input.timezone === null || input.timezone === '' ? undefined : input.timezone
  if (zone !== undefined && (typeof zone !== 'string' || !isKnownTimeZone(zone))) {
    return 'timezone is not an IANA time zone name (such as America/Chicago)'
  }
  const meta = input.custom_metadata
  if (meta !== undefined && meta !== null && (typeof meta !== 'object' || Array.isArray(meta))) return 'custom_metadata must be an object'
  if (meta !== undefined && meta !== null && Buffer.byteLength(JSON.stringify(meta)) > MAX_CONTACT_METADATA_BYTES) {
    return `custom_metadata is longer than ${MAX_CONTACT_METADATA_BYTES} bytes as JSON`
  }
  const first = seen.get(number.e164)
  if (first !== undefined) return `duplicate of row ${first}`
  seen.set(number.e164, row)
  contacts.push({
    row,
    phoneNumber: number.e164,
    timezone: contactTimeZone(number.country, zone as string | undefined, defaultTimezone).timeZone,
    customMetadata: meta === undefined || meta === null ? undefined : (meta as Record<string, unknown>),
  })
  return undefined
}

/**
 * Maps a CSV upload to contact rows: the header names the columns; `phone_number` is required, `timezone` is
 * optional, and every other column becomes a string field of the contact's custom_metadata (empty cells left out).
 */
export function csvContacts(text: string): { rows: ContactInput[] } | { error: string } {
  const [header, ...lines] = parseCsv(text)
  if (header === undefined) return { error: 'the CSV is empty: its first line must name the columns (phone_number, ...)' }
  const names = header.map((h) => h.trim())
  const phone = names.indexOf('phone_number')
  if (phone < 0) return { error: 'the CSV header has no phone_number column' }
  const zone = names.indexOf('timezone')
  const rows = lines
    .filter((cells) => !(cells.length === 1 && cells[0]?.trim() === ''))
    .map((cells) => {
      const meta: Record<string, string> = {}
      names.forEach((name, i) => {
        const cell = cells[i]
        if (i !== phone && i !== zone && name !== '' && cell !== undefined && cell !== '') meta[name] = cell
      })
      return {
        phone_number: cells[phone] ?? '',
        timezone: zone < 0 ? undefined : cells[zone]?.trim(),
        custom_metadata: Object.keys(meta).length > 0 ? meta : undefined,
      }
    })
  return { rows }
}
