/**
 * SIP messages as typed values (RFC 3261 section 7): a request or a response, its headers in wire order with
 * canonical names, and its body as bytes. Header look-ups are case-insensitive and understand compact forms.
 */
import { splitList } from './sip-syntax.js'

/** One header line. `name` is canonical (`Via`, `Call-ID`), whatever the wire spelling (`v`, `call-id`). */
export interface SipHeader {
  readonly name: string
  readonly value: string
}

/** What requests and responses share. */
interface SipMessageBase {
  readonly headers: readonly SipHeader[]
  readonly body: Buffer
}

/** A SIP request: `METHOD Request-URI SIP/2.0`. */
export interface SipRequest extends SipMessageBase {
  readonly kind: 'request'
  readonly method: string
  readonly uri: string
}

/** A SIP response: `SIP/2.0 Status-Code Reason-Phrase`. */
export interface SipResponse extends SipMessageBase {
  readonly kind: 'response'
  readonly status: number
  readonly reason: string
}

/** Either kind of SIP message. */
export type SipMessage = SipRequest | SipResponse

/** RFC 3261 section 7.3.3 and later RFCs' compact forms, lower-case letter -> canonical name. */
const COMPACT: Readonly<Record<string, string>> = {
  a: 'Accept-Contact',
  b: 'Referred-By',
  c: 'Content-Type',
  d: 'Request-Disposition',
  e: 'Content-Encoding',
  f: 'From',
  i: 'Call-ID',
  j: 'Reject-Contact',
  k: 'Supported',
  l: 'Content-Length',
  m: 'Contact',
  o: 'Event',
  r: 'Refer-To',
  s: 'Subject',
  t: 'To',
  u: 'Allow-Events',
  v: 'Via',
  x: 'Session-Expires',
  y: 'Identity',
}

/** Canonical spellings of the headers this transport reads or writes, by lower-cased name. */
const CANONICAL = new Map(
  [
    'Accept',
    'Allow',
    'Authorization',
    'Call-ID',
    'Contact',
    'Content-Length',
    'Content-Type',
    'CSeq',
    'Event',
    'Expires',
    'From',
    'Max-Forwards',
    'Min-SE',
    'Proxy-Authenticate',
    'Proxy-Authorization',
    'Reason',
    'Record-Route',
    'Refer-To',
    'Require',
    'Retry-After',
    'Route',
    'Server',
    'Session-Expires',
    'Subject',
    'Supported',
    'To',
    'Unsupported',
    'User-Agent',
    'Via',
    'Warning',
    'WWW-Authenticate',
    ...Object.values(COMPACT),
  ].map((name) => [name.toLowerCase(), name]),
)

/**
 * Headers whose values are comma-separated lists (RFC 3261 section 7.3.1), so that `Via: a, b` and two Via lines
 * mean the same. The authentication headers are not: their parameters contain commas.
 */
const LIST_HEADERS = new Set([
  'Accept',
  'Accept-Encoding',
  'Accept-Language',
  'Allow',
  'Allow-Events',
  'Contact',
  'Content-Encoding',
  'Proxy-Require',
  'Record-Route',
  'Require',
  'Route',
  'Supported',
  'Unsupported',
  'Via',
])

/** The canonical name for a wire header name (`v` -> `Via`, `call-id` -> `Call-ID`); unknown names keep their case. */
export function canonicalHeaderName(name: string): string {
  const lower = name.toLowerCase()
  return (lower.length === 1 ? COMPACT[lower] : undefined) ?? CANONICAL.get(lower) ?? name
}

/** The first value of header `name` (any spelling), or `undefined`. */
export function getHeader(message: Pick<SipMessage, 'headers'>, name: string): string | undefined {
  const wanted = canonicalHeaderName(name).toLowerCase()
  return message.headers.find((h) => h.name.toLowerCase() === wanted)?.value
}

/**
 * Every value of header `name`, across lines and, for list headers, across commas. `null` when a list value has an
 * unterminated quote or bracket.
 */
export function getHeaderValues(message: Pick<SipMessage, 'headers'>, name: string): string[] | null {
  const canonical = canonicalHeaderName(name)
  const wanted = canonical.toLowerCase()
  const values: string[] = []
  for (const h of message.headers) {
    if (h.name.toLowerCase() !== wanted) continue
    if (!LIST_HEADERS.has(canonical)) {
      values.push(h.value)
      continue
    }
    const parts = splitList(h.value)
    if (parts === null) return null
    values.push(...parts)
  }
  return values
}

/**
 * The methods a message's `Allow` header lists, upper-cased; undefined without one (nothing is known then) or when it
 * cannot be read. Bounded: a peer lists a handful of methods, at most 32 are kept.
 */
export function allowedMethods(message: Pick<SipMessage, 'headers'>): readonly string[] | undefined {
  if (getHeader(message, 'Allow') === undefined) return undefined
  const values = getHeaderValues(message, 'Allow')
  if (values === null) return undefined
  return values
    .map((v) => v.trim().toUpperCase())
    .filter((v) => /^[A-Z]{1,32}$/.test(v))
    .slice(0, 32)
}
