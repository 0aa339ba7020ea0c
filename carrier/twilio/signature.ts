/**
 * Twilio's request-signature algorithm, as a Twilio account sends it (`X-Twilio-Signature`) and as the SPEC names it
 * (`X-Carrier-Signature`): the same value under either header.
 *
 * Follows twilio-node `webhooks.ts` (`getExpectedTwilioSignature`, `validateRequest`,
 * `validateRequestWithBody`): data = URL + each form field sorted by name as name+value (repeated
 * fields: each distinct value, sorted); HMAC-SHA1 with the auth token; base64.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { parse as parseQuery, stringify as stringifyQuery } from 'node:querystring'
import type { CarrierFormParams, CarrierSignatureResult, CarrierSignatureVerifier, CarrierSignedRequest } from '../carrier.js'

/**
 * Headers carrying the signature (lower case, as Node exposes them): the one a real Twilio account sends, then the
 * SPEC's name. Either is enough; a request with neither is unsigned.
 */
export const SIGNATURE_HEADERS = ['x-twilio-signature', 'x-carrier-signature'] as const

/** Query parameter holding the hex SHA-256 of a JSON body. */
export const BODY_HASH_PARAM = 'bodySHA256'

/**
 * Join PUBLIC_URL (which may carry a path prefix) and the request's path and query as the
 * gateway received them. Never derive this from the Host header: proxies change it.
 */
export function expectedUrl(publicUrl: string, pathAndQuery: string): string {
  const base = new URL(publicUrl)
  const prefix = base.pathname.replace(/\/+$/, '')
  const rest = pathAndQuery === '' ? '/' : pathAndQuery.replace(/^\/*/, '/')
  return `${base.protocol}//${userinfo(base)}${base.host}${prefix}${rest}`
}

/** Compute the signature of `url` (used verbatim) and form `params` (pass `{}` for a JSON body). */
export function computeSignature(authToken: string, url: string, params: CarrierFormParams): string {
  let data = url
  for (const name of Object.keys(params).sort()) {
    const value = params[name]
    if (typeof value === 'string') {
      data += name + value
    } else if (value !== undefined) {
      for (const v of Array.from(new Set(value)).sort()) data += name + v
    }
  }
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64')
}

/** Hex SHA-256 of a raw body, as carried by the `bodySHA256` query parameter. */
export function bodyHash(rawBody: string | Buffer): string {
  return createHash('sha256').update(rawBody).digest('hex')
}

/**
 * The URL spellings twilio-node accepts for one request, because the carrier's signing is
 * inconsistent: without and with the scheme's default port (:443 / :80), each also with the query
 * re-encoded the legacy `querystring` way. A non-default port is always kept (twilio-node would
 * also accept it stripped; we do not, so a signature made for another port never validates).
 */
export function urlVariants(url: string): string[] {
  const parsed = new URL(url)
  const plain = parsed.toString()
  const spellings = [plain]
  const defaultPort = parsed.protocol === 'https:' ? '443' : parsed.protocol === 'http:' ? '80' : undefined
  if (parsed.port === '' && defaultPort !== undefined) {
    spellings.push(
      `${parsed.protocol}//${userinfo(parsed)}${parsed.host}:${defaultPort}` + `${parsed.pathname}${parsed.search}${parsed.hash}`,
    )
  }
  if (parsed.search !== '') {
    for (const spelling of spellings.slice()) spellings.push(withLegacyQuery(spelling))
  }
  return Array.from(new Set(spellings))
}

/** Validate a form-encoded request signature against every accepted URL spelling (throws on an unparsable URL). */
export function validateSignature(authToken: string, signature: string | undefined, url: string, params: CarrierFormParams): boolean {
  if (!signature) return false
  let ok = false
  for (const variant of urlVariants(url)) {
    // No early exit: both spellings cost the same whichever matches.
    if (safeEqual(signature, computeSignature(authToken, variant, params))) ok = true
  }
  return ok
}

/**
 * Validate a JSON-bodied request: the URL (with its `bodySHA256` query) is signed with no params,
 * then the body must hash to `bodySHA256`.
 */
export function validateSignatureWithBody(
  authToken: string,
  signature: string | undefined,
  url: string,
  rawBody: string | Buffer,
): CarrierSignatureResult {
  if (!signature) return { ok: false, reason: 'missing_signature' }
  if (!validateSignature(authToken, signature, url, {})) return { ok: false, reason: 'bad_signature' }
  const claimed = new URL(url).searchParams.get(BODY_HASH_PARAM) ?? ''
  if (!safeEqual(claimed.toLowerCase(), bodyHash(rawBody))) return { ok: false, reason: 'bad_body_hash' }
  return { ok: true }
}

/** `CarrierSignatureVerifier` for Twilio-compatible carriers. */
export class TwilioSignatureVerifier implements CarrierSignatureVerifier {
  readonly headerNames = SIGNATURE_HEADERS

  requestUrl(publicUrl: string, pathAndQuery: string): string {
    return expectedUrl(publicUrl, pathAndQuery)
  }

  verify(request: CarrierSignedRequest, authToken: string): CarrierSignatureResult {
    // A JSON body is signed only through the bodySHA256 its URL carries: without one anyone could change the fields.
    if (request.bodyKind === 'json' && !carriesBodyHash(request.url)) {
      return { ok: false, reason: 'unsigned_body', detail: `a JSON body must be signed with ${BODY_HASH_PARAM}` }
    }
    if (!request.signature) return { ok: false, reason: 'missing_signature' }
    let hasBodyHash: boolean
    try {
      hasBodyHash = new URL(request.url).searchParams.has(BODY_HASH_PARAM)
    } catch {
      return { ok: false, reason: 'bad_url' }
    }
    if (hasBodyHash) {
      return validateSignatureWithBody(authToken, request.signature, request.url, request.rawBody ?? '')
    }
    return validateSignature(authToken, request.signature, request.url, request.params)
      ? { ok: true }
      : { ok: false, reason: 'bad_signature' }
  }
}

/** Parse an `application/x-www-form-urlencoded` body, keeping every value of repeated fields. */
export function parseFormBody(body: string | Buffer): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>
  for (const [name, value] of new URLSearchParams(typeof body === 'string' ? body : body.toString('utf8'))) {
    const prev = out[name]
    if (prev === undefined) out[name] = value
    else if (typeof prev === 'string') out[name] = [prev, value]
    else prev.push(value)
  }
  return out
}

function carriesBodyHash(url: string): boolean {
  try {
    return new URL(url).searchParams.has(BODY_HASH_PARAM)
  } catch {
    return false
  }
}

function withLegacyQuery(url: string): string {
  const parsed = new URL(url)
  const query = stringifyQuery(parseQuery(parsed.search.slice(1)))
  const hashAt = url.indexOf('#')
  const beforeHash = hashAt === -1 ? url : url.slice(0, hashAt)
  const queryAt = beforeHash.indexOf('?')
  return `${queryAt === -1 ? beforeHash : beforeHash.slice(0, queryAt)}?${query}`
}

function userinfo(url: URL): string {
  if (url.username === '' && url.password === '') return ''
  return url.password === '' ? `${url.username}@` : `${url.username}:${url.password}@`
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8')
  const right = Buffer.from(b, 'utf8')
  // Lengths are public (a base64 SHA-1 is always 28 chars); compare contents in constant time.
  if (left.length !== right.length) return false
  return timingSafeEqual(left, right)
}
