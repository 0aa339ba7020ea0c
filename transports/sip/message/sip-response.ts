/**
 * Builds a UAS response to a request (RFC 3261 section 8.2.6): Via (every value, in order), From, Call-ID and
 * CSeq copied, To copied with our tag added (except on 100 Trying), a Content-Length from the body. Works from a
 * decoded request or from the headers a decode error kept, so a malformed request still gets its 400.
 */
import type { SipDecodeError } from './sip-decode-error.js'
import { getHeader, type SipHeader, type SipRequest, type SipResponse } from './sip-message.js'

/** RFC 3261 section 21's reason phrases for the statuses this gateway sends. */
export const REASON_PHRASES: Readonly<Record<number, string>> = {
  100: 'Trying',
  180: 'Ringing',
  183: 'Session Progress',
  200: 'OK',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  407: 'Proxy Authentication Required',
  408: 'Request Timeout',
  415: 'Unsupported Media Type',
  416: 'Unsupported URI Scheme',
  420: 'Bad Extension',
  422: 'Session Interval Too Small',
  480: 'Temporarily Unavailable',
  481: 'Call/Transaction Does Not Exist',
  486: 'Busy Here',
  487: 'Request Terminated',
  488: 'Not Acceptable Here',
  500: 'Server Internal Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  505: 'Version Not Supported',
  513: 'Message Too Large',
  603: 'Decline',
}

/** What a response needs of its request. */
export type RespondTo = Pick<SipRequest, 'headers'>

/** Options for `buildResponse`. */
export interface ResponseOptions {
  /** Our To tag; required for every response but 100 unless the request's To already has one (in-dialog). */
  readonly toTag?: string
  /** The reason phrase; defaults to RFC 3261's. */
  readonly reason?: string
  /** Extra headers after the copied ones (Contact, Allow, WWW-Authenticate, Warning, ...). */
  readonly headers?: readonly SipHeader[]
  readonly body?: Buffer
}

/** The response `status` to `request`. */
export function buildResponse(request: RespondTo, status: number, options: ResponseOptions = {}): SipResponse {
  const headers: SipHeader[] = request.headers.filter((h) => h.name === 'Via').map((h) => ({ name: 'Via', value: h.value }))
  const from = getHeader(request, 'From')
  if (from !== undefined) headers.push({ name: 'From', value: from })
  const to = getHeader(request, 'To')
  if (to !== undefined) {
    const tagged = status === 100 || options.toTag === undefined || /;\s*tag\s*=/i.test(to) ? to : `${to};tag=${options.toTag}`
    headers.push({ name: 'To', value: tagged })
  }
  for (const name of ['Call-ID', 'CSeq']) {
    const value = getHeader(request, name)
    if (value !== undefined) headers.push({ name, value })
  }
  headers.push(...(options.headers ?? []))
  return {
    kind: 'response',
    status,
    reason: options.reason ?? REASON_PHRASES[status] ?? '',
    headers,
    body: options.body ?? Buffer.alloc(0),
  }
}

/**
 * The answer to a request that did not decode: its status (400, 505, 513) with the reason in a Warning, or `null`
 * when nothing can be answered (a response, or no Via to send it back along): the message is then dropped.
 */
export function responseToDecodeError(error: SipDecodeError, toTag: string): SipResponse | null {
  if (error.method === undefined || error.method === 'ACK' || error.headers === undefined) return null
  if (!error.headers.some((h) => h.name === 'Via')) return null
  const warning = `399 voxgate ${JSON.stringify(error.reason.replace(/["\\]/g, "'").slice(0, 100))}`
  return buildResponse({ headers: error.headers }, error.status, { toTag, headers: [{ name: 'Warning', value: warning }] })
}
