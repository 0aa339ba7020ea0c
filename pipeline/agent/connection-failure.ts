/**
 * A failed connection in a few fixed words. An error's code or message tells more than the organization should
 * learn: a closed port (ECONNREFUSED) from an open one that speaks no TLS (ERR_SSL_WRONG_VERSION_NUMBER), or what a
 * resolver answered. The words keep the failure useful ("is my backend up?") and tell nothing more.
 */

/** What a failed connection is reported as: one of these, never its code or message. */
export type ConnectionFailureWords =
  | 'connection refused'
  | 'timeout'
  | 'tls error'
  | 'dns error'
  | 'connection reset'
  | 'refused by the egress policy'
  | 'connection failed'

/** Codes of a resolver that could not answer for the name. */
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'ENODATA', 'ESERVFAIL', 'ENONAME'])
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'])
/** OpenSSL's and Node's TLS codes, and certificate verification failures. */
const TLS_CODE = /^(ERR_SSL_|ERR_TLS_|ERR_OSSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/

/** The words for one code, or undefined when the code says nothing known. */
function wordsOfCode(code: string): ConnectionFailureWords | undefined {
  if (code === 'EGRESS_REFUSED') return 'refused by the egress policy'
  if (code === 'ECONNREFUSED') return 'connection refused'
  if (TIMEOUT_CODES.has(code)) return 'timeout'
  if (DNS_CODES.has(code)) return 'dns error'
  if (TLS_CODE.test(code)) return 'tls error'
  if (RESET_CODES.has(code)) return 'connection reset'
  return undefined
}

/**
 * The words for a failed request or a body cut off: the first code along the error's causes that says something
 * (fetch's TypeError carries the socket's error as its cause), else `connection failed`.
 */
export function connectionFailureWords(error: unknown): ConnectionFailureWords {
  let current: unknown = error
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    const { code, name } = current as { code?: unknown; name?: unknown }
    const words = typeof code === 'string' ? wordsOfCode(code) : undefined
    if (words !== undefined) return words
    if (name === 'TimeoutError') return 'timeout'
    current = (current as { cause?: unknown }).cause
  }
  return 'connection failed'
}
