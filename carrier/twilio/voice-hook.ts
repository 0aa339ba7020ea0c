/**
 * The Twilio-compatible voice hook form (`CallSid`, `Direction`, `From`, `To`, `FromCountry`, `ToCountry`,
 * `CallStatus`, ...) read into carrier-neutral terms.
 */
import type { CarrierFormParams, CarrierVoiceHook } from '../carrier.js'
import { parseStatusCallback } from './status.js'

/** Reads a voice hook form; blank fields count as absent. */
export function parseVoiceHook(params: CarrierFormParams): CarrierVoiceHook {
  const direction = field(params, 'Direction')
  const status = parseStatusCallback(params)
  return {
    callSid: field(params, 'CallSid'),
    direction,
    // `outbound-api` (placed through the Calls API) and `outbound-dial` (a <Dial> leg).
    outbound: direction?.startsWith('outbound') ?? false,
    from: field(params, 'From'),
    to: field(params, 'To'),
    fromCountry: country(field(params, 'FromCountry')),
    toCountry: country(field(params, 'ToCountry')),
    status: status.ok ? status.update.status : undefined,
  }
}

/** First value of a field, trimmed; undefined when absent or blank. */
function field(params: CarrierFormParams, name: string): string | undefined {
  const v = params[name]
  const first = typeof v === 'string' ? v : v?.[0]
  const trimmed = first?.trim()
  return trimmed === undefined || trimmed === '' ? undefined : trimmed
}

function country(value: string | undefined): string | undefined {
  return value !== undefined && /^[A-Za-z]{2}$/.test(value) ? value.toUpperCase() : undefined
}
