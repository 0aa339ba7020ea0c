/**
 * Why a SIP message did not decode. Every reason has a stable code and the response a UAS sends for a request
 * that fails this way (RFC 3261 section 21); a malformed response is dropped, never answered.
 */
import type { SipHeader } from './sip-message.js'

/** Decode failures, code -> the status to answer a request with. */
export const SIP_DECODE_ERRORS = {
  /** Over the size limit (RFC 3261 section 21.5.14). */
  too_large: 513,
  too_many_headers: 513,
  /** No blank line ending the header section. */
  incomplete: 400,
  bad_start_line: 400,
  /** Not SIP/2.0 (section 21.5.6). */
  bad_version: 505,
  bad_status: 400,
  bad_header: 400,
  /** One header line over MAX_HEADER_LENGTH (8,192 characters). */
  header_too_long: 400,
  /** A NUL or another control character outside a quoted-pair. */
  control_character: 400,
  missing_header: 400,
  bad_content_length: 400,
  /** Content-Length larger than the datagram (RFC 4475 section 3.1.2.2). */
  truncated_body: 400,
  bad_cseq: 400,
  /** The CSeq method is not the request's method (RFC 4475 section 3.1.2.17). */
  cseq_method_mismatch: 400,
  bad_uri: 400,
  bad_address: 400,
  bad_via: 400,
} as const

/** A decode failure's code. */
export type SipDecodeErrorCode = keyof typeof SIP_DECODE_ERRORS

/** A decode failure: the code, a short reason for logs, and what is known of the message to answer it with. */
export interface SipDecodeError {
  readonly code: SipDecodeErrorCode
  readonly reason: string
  /** The status a UAS answers with when the message was a request. */
  readonly status: number
  /** Set when the start line said this was a request. */
  readonly method?: string | undefined
  /** The headers read before the failure, so a 400 can copy Via, From, To, Call-ID and CSeq. */
  readonly headers?: readonly SipHeader[] | undefined
}

/** Builds a decode failure. */
export function decodeError(
  code: SipDecodeErrorCode,
  reason: string,
  known: { method?: string | undefined; headers?: readonly SipHeader[] | undefined } = {},
): SipDecodeError {
  return { code, reason, status: SIP_DECODE_ERRORS[code], method: known.method, headers: known.headers }
}
