/**
 * Where a backend's `response.transfer` sends a caller (an addition to the SPEC): an E.164 number or a `sip:`
 * URI, with an optional caller id and SIP headers that carry the backend's context (a ticket id) to the contact
 * centre's platform. Pure: validated here once, then handed to the carrier as a value.
 */
import { normalisePhoneNumber } from './phone.js'

/** A validated transfer destination. */
export type TransferTarget =
  | { readonly kind: 'number'; readonly to: string; readonly callerId: string | undefined }
  | {
      readonly kind: 'sip'
      readonly to: string
      readonly callerId: string | undefined
      /** `X-` prefixed names, in the order given. */
      readonly headers: readonly { readonly name: string; readonly value: string }[]
    }

/** What a backend asked for, as it arrived (unchecked). */
export interface TransferRequest {
  readonly to: string
  readonly callerId?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/** Most SIP headers one transfer may carry, and the longest value (SIP URIs travel in signalling: keep them short). */
export const MAX_TRANSFER_HEADERS = 16
export const MAX_TRANSFER_HEADER_VALUE = 256
const SIP_URI = /^sips?:[A-Za-z0-9._~%!$&'()*+,;=-]+@[A-Za-z0-9.-]+(:\d{1,5})?(;[A-Za-z0-9=._-]+)*$/
const HEADER_NAME = /^[A-Za-z][A-Za-z0-9-]{0,62}$/
const CALLER_ID = /^[+A-Za-z0-9._-]{1,64}$/
const PRINTABLE = /^[\x20-\x7e]*$/

/** The target, or the problems with it (each a sentence for the error body's `details`). */
export function parseTransferTarget(request: TransferRequest): { ok: true; target: TransferTarget } | { ok: false; problems: string[] } {
  const problems: string[] = []
  const to = request.to.trim()
  const headers = Object.entries(request.headers ?? {})
  const callerId = request.callerId
  if (callerId !== undefined && !CALLER_ID.test(callerId)) problems.push('caller_id must be a phone number or a SIP user (1-64 characters)')
  if (/^sips?:/i.test(to)) {
    if (to.length > 256 || !SIP_URI.test(to))
      problems.push(`to: ${JSON.stringify(to.slice(0, 80))} is not a SIP URI of the form sip:user@host`)
    if (headers.length > MAX_TRANSFER_HEADERS) problems.push(`headers: at most ${MAX_TRANSFER_HEADERS}`)
    const named: { name: string; value: string }[] = []
    for (const [rawName, value] of headers.slice(0, MAX_TRANSFER_HEADERS)) {
      // The carrier passes only X- headers through to the SIP INVITE: a bare name gets the prefix.
      const name = /^x-/i.test(rawName) ? `X-${rawName.slice(2)}` : `X-${rawName}`
      if (!HEADER_NAME.test(rawName) || name.length > 64)
        problems.push(`headers: ${JSON.stringify(rawName.slice(0, 40))} is not a header name`)
      else if (typeof value !== 'string' || value.length > MAX_TRANSFER_HEADER_VALUE || !PRINTABLE.test(value)) {
        problems.push(`headers: ${name} must be printable text of at most ${MAX_TRANSFER_HEADER_VALUE} characters`)
      } else named.push({ name, value })
    }
    if (problems.length > 0) return { ok: false, problems }
    return { ok: true, target: { kind: 'sip', to, callerId, headers: named } }
  }
  const number = normalisePhoneNumber(to)
  if (number === undefined || !to.startsWith('+')) {
    problems.push(`to: ${JSON.stringify(to.slice(0, 80))} is neither an E.164 phone number nor a sip: URI`)
  }
  if (headers.length > 0) problems.push('headers need a sip: target (a phone network carries no SIP headers)')
  if (problems.length > 0 || number === undefined) return { ok: false, problems }
  return { ok: true, target: { kind: 'number', to: number.e164, callerId } }
}

/** The SIP URI the carrier dials: the target with its headers as the URI's query (`sip:a@b?X-Ticket=1`). */
export function sipUriWithHeaders(target: Extract<TransferTarget, { kind: 'sip' }>): string {
  if (target.headers.length === 0) return target.to
  const query = target.headers.map((h) => `${h.name}=${encodeURIComponent(h.value)}`).join('&')
  return `${target.to}?${query}`
}
