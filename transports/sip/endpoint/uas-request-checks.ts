/**
 * The UAS checks of RFC 3261 section 8.2.2 that come before a request's method is handled: a Request-URI scheme
 * we do not serve gets 416 (section 8.2.2.1), an extension the request requires and we lack gets 420 with
 * Unsupported (section 8.2.2.3). Pure: the request in, the refusal or `null` out. A method we do not know is
 * not checked here: its 501 comes first (section 8.2.1), as RFC 4475 section 3.1.2.18 prefers.
 */
import { getHeaderValues, type SipHeader, type SipRequest } from '../message/sip-message.js'

/**
 * The Request-URI schemes served. `tel` (RFC 3966) beside `sip` and `sips`: the Request-URI names the number
 * called, and carriers that speak IMS or SIP-I send it as `tel:+14155552671`; the admission reads its number as
 * it reads a sip URI's user part.
 */
export const SUPPORTED_URI_SCHEMES: ReadonlySet<string> = new Set(['sip', 'sips', 'tel'])

/** The option tags we implement, as our Supported header says (RFC 4028 session timers). */
export const SUPPORTED_OPTION_TAGS: ReadonlySet<string> = new Set(['timer'])

/** The methods the checks apply to: those we implement, and REGISTER (405). */
const KNOWN_METHODS: ReadonlySet<string> = new Set(['INVITE', 'ACK', 'CANCEL', 'BYE', 'OPTIONS', 'UPDATE', 'NOTIFY', 'REGISTER'])

/** A refusal of the checks: the status and the headers that go with it. */
export interface UasRefusal {
  readonly status: 416 | 420
  readonly headers: readonly SipHeader[]
}

/** What section 8.2.2 refuses of `request`, or `null` to go on. ACK and CANCEL are never refused here. */
export function uasRefusal(request: Pick<SipRequest, 'method' | 'uri' | 'headers'>): UasRefusal | null {
  if (!KNOWN_METHODS.has(request.method) || request.method === 'ACK' || request.method === 'CANCEL') return null
  const scheme = request.uri.slice(0, Math.max(0, request.uri.indexOf(':'))).toLowerCase()
  if (!SUPPORTED_URI_SCHEMES.has(scheme)) return { status: 416, headers: [] }
  const required = (getHeaderValues(request, 'Require') ?? []).map((tag) => tag.trim()).filter((tag) => tag !== '')
  const unsupported = required.filter((tag) => !SUPPORTED_OPTION_TAGS.has(tag.toLowerCase()))
  if (unsupported.length > 0) return { status: 420, headers: [{ name: 'Unsupported', value: unsupported.join(', ') }] }
  return null
}
