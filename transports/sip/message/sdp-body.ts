/**
 * Finds the session description in a request's body (RFC 5621): the whole body when it is `application/sdp` (or
 * has no Content-Type, as some PBXs send it), else the SDP part of a `multipart/mixed`, `related` or
 * `alternative` body, other parts (ISUP, a signature, a location) ignored. Pure.
 */
import { MAX_PARTS, type MultipartPart, parseMediaType, parseMultipart } from './multipart-body.js'
import { getHeader } from './sip-message.js'

/** How deep multiparts may nest (a multipart/alternative inside a multipart/mixed is seen in the wild). */
const MAX_DEPTH = 2

/** What the body holds: an SDP, nothing to use as one (a late offer), a type we cannot read, or a broken body. */
export type SessionBody =
  | { readonly kind: 'sdp'; readonly sdp: string }
  | { readonly kind: 'none' }
  | { readonly kind: 'unsupported'; readonly type: string }
  | { readonly kind: 'malformed'; readonly reason: string }

/**
 * The SDP in `body` whose Content-Type header is `contentType`. In a multipart the session description is the
 * part with `Content-Disposition: session`, or with no disposition and `application/sdp` (SDP's default
 * disposition is session, RFC 3261 section 20.11); the first such part wins. A multipart without one is as a body
 * without SDP.
 */
export function sessionBody(contentType: string | undefined, body: Buffer): SessionBody {
  if (body.toString('latin1').trim() === '') return { kind: 'none' }
  if (contentType === undefined) return { kind: 'sdp', sdp: body.toString('utf8') }
  return fromTyped(contentType, body, 0)
}

/**
 * The SDP of a message inside a dialog (a re-INVITE's or UPDATE's offer, an ACK's or a 2xx's answer) for the
 * offer/answer readers, alone or as a multipart's session part; '' when it carries none. A body that cannot be read
 * as one comes back whole, so the reader refuses it (488, or the call's end) with its own reason.
 */
export function sdpOf(message: { readonly body: Buffer; readonly headers: readonly { name: string; value: string }[] }): string {
  const found = sessionBody(getHeader(message, 'Content-Type'), message.body)
  return found.kind === 'sdp' ? found.sdp : found.kind === 'none' ? '' : message.body.toString('utf8')
}

function fromTyped(contentType: string, body: Buffer, depth: number): SessionBody {
  const media = parseMediaType(contentType)
  if (media === null) return { kind: 'malformed', reason: `bad Content-Type ${JSON.stringify(contentType.slice(0, 60))}` }
  if (media.type === 'application/sdp') return { kind: 'sdp', sdp: body.toString('utf8') }
  if (!/^multipart\/(?:mixed|related|alternative)$/.test(media.type) || depth >= MAX_DEPTH) return { kind: 'unsupported', type: media.type }
  const boundary = media.params.get('boundary')
  if (boundary === undefined || boundary === null) return { kind: 'malformed', reason: `${media.type} without a boundary` }
  const parsed = parseMultipart(body, boundary)
  if (!parsed.ok) return { kind: 'malformed', reason: `${media.type}: ${parsed.reason}` }
  for (const part of parsed.parts.slice(0, MAX_PARTS)) {
    const found = fromPart(part, depth)
    if (found.kind === 'sdp' || found.kind === 'malformed') return found
  }
  return { kind: 'none' }
}

/** A part's session description, if it is one (or a nested multipart holding one). */
function fromPart(part: MultipartPart, depth: number): SessionBody {
  const header = (name: string) => part.headers.find((h) => h.name === name)?.value
  const type = header('content-type') ?? 'text/plain'
  const disposition = header('content-disposition')?.split(';')[0]?.trim().toLowerCase()
  const media = parseMediaType(type)
  if (media?.type.startsWith('multipart/')) return fromTyped(type, part.body, depth + 1)
  if (media?.type !== 'application/sdp') return { kind: 'none' }
  if (disposition !== undefined && disposition !== 'session') return { kind: 'none' }
  return { kind: 'sdp', sdp: part.body.toString('utf8') }
}
