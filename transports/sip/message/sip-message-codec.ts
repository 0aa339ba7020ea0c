/**
 * Pure codec for SIP messages (RFC 3261 section 7): bytes <-> `SipMessage`. Decoding never throws; it returns
 * `{ ok: false, error }` with a stable code, bounded by a size and a header-count limit so a hostile datagram
 * costs little. Header values are unfolded (section 7.3.1), compact names canonicalised, and the headers a UA
 * relies on (Via, From, To, Call-ID, CSeq, Content-Length) validated; other headers are kept as text.
 */
import { decodeError, type SipDecodeError, type SipDecodeErrorCode } from './sip-decode-error.js'
import { canonicalHeaderName, getHeader, getHeaderValues, type SipHeader, type SipMessage } from './sip-message.js'
import { hasControlCharacter, isToken } from './sip-syntax.js'
import { parseCSeq, parseNameAddr, parseUri, parseVia } from './sip-uri-codec.js'

/** Largest message accepted: the largest UDP payload; a stream transport uses the same bound. */
export const MAX_MESSAGE_BYTES = 65_535

/** Most header lines accepted in one message (a real INVITE has 10-30). */
export const MAX_HEADERS = 128

/**
 * Longest header line accepted, name and unfolded value, in characters: a real one is under 1 KB (a long
 * Record-Route set, a P-Asserted-Identity with a display name); 60 KB in one Via or Subject is an attack on
 * whatever parses it after us, and Kamailio's default bound is of the same order.
 */
export const MAX_HEADER_LENGTH = 8_192

/** Decode options. */
export interface SipDecodeOptions {
  /**
   * `datagram` (UDP): the message is the whole buffer, Content-Length may be absent and bytes after the body are
   * discarded. `stream` (TCP/TLS): the framer already cut the message at Content-Length, which is mandatory.
   */
  readonly framing?: 'datagram' | 'stream'
  readonly maxBytes?: number
  readonly maxHeaders?: number
}

/** The result of decoding. */
export type SipDecodeResult = { readonly ok: true; readonly message: SipMessage } | { readonly ok: false; readonly error: SipDecodeError }

const CRLFCRLF = Buffer.from('\r\n\r\n')
const LFLF = Buffer.from('\n\n')

/** Where the header section ends: the index of the blank line and the length of the separator; `null` if none. */
export function findHeaderEnd(bytes: Uint8Array, from = 0): { at: number; length: number } | null {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
  const crlf = buf.indexOf(CRLFCRLF, from)
  const lf = buf.indexOf(LFLF, from)
  if (crlf < 0 && lf < 0) return null
  if (lf >= 0 && (crlf < 0 || lf < crlf)) return { at: lf, length: 2 }
  return { at: crlf, length: 4 }
}

/**
 * True for a datagram of CR and LF only: RFC 5626's CRLF keep-alive and the blank lines some phones send to
 * hold a NAT binding open. It is no message and gets no answer.
 */
export function isKeepAlive(bytes: Uint8Array): boolean {
  if (bytes.length === 0) return false
  for (const byte of bytes) if (byte !== 0x0d && byte !== 0x0a) return false
  return true
}

/** Decodes one SIP message from `bytes`. */
export function decodeSipMessage(bytes: Uint8Array, options: SipDecodeOptions = {}): SipDecodeResult {
  const maxBytes = options.maxBytes ?? MAX_MESSAGE_BYTES
  const maxHeaders = options.maxHeaders ?? MAX_HEADERS
  if (bytes.length > maxBytes) return fail(decodeError('too_large', `message exceeds ${maxBytes} bytes`, salvageRequest(bytes, maxBytes)))
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
  // RFC 3261 section 7.5: CRLFs before the start line are ignored (they are also keep-alives on streams).
  let start = 0
  while (buf[start] === 0x0d || buf[start] === 0x0a) start++
  const end = findHeaderEnd(buf, start)
  // A datagram is all there is (RFC 4475 section 3.1.2.15's message ends without its blank line): a request whose
  // Via was read gets its 400.
  if (end === null) return fail(decodeError('incomplete', 'no blank line after the headers', salvageRequest(buf, maxBytes)))
  const lines = unfold(buf.toString('utf8', start, end.at))
  const startLine = lines.shift() ?? ''

  const head = parseStartLine(startLine)
  // A request whose start line is wrong (SIP/7.0, a bracketed Request-URI) is still answered (505, 400) when
  // its headers give a Via to answer along.
  if ('code' in head) return fail(head.method === undefined ? head : { ...head, headers: readHeaders(lines.slice(0, maxHeaders)).headers })
  const method = head.kind === 'request' ? head.method : undefined

  if (lines.length > maxHeaders) {
    const { headers } = readHeaders(lines.slice(0, maxHeaders))
    return fail(decodeError('too_many_headers', `more than ${maxHeaders} headers`, { method, headers }))
  }
  const { headers, problem } = readHeaders(lines)
  // The answer copies only the lines that were sound: a NUL in a Subject must not keep the 400 from going out,
  // and a NUL in a Via must not go back out in it.
  if (problem !== null) return fail(decodeError(problem.code, problem.reason, { method, headers }))
  const known = { method, headers }

  const bodyStart = end.at + end.length
  const lengths = getHeaderValues({ headers }, 'Content-Length') ?? []
  let bodyLength = buf.length - bodyStart
  if (lengths.length > 0) {
    if (!lengths.every((l) => /^[0-9]{1,10}$/.test(l)) || new Set(lengths.map(Number)).size > 1) {
      return fail(decodeError('bad_content_length', `bad Content-Length ${JSON.stringify(lengths.join(', ').slice(0, 40))}`, known))
    }
    const declared = Number(lengths[0])
    if (declared > bodyLength)
      return fail(decodeError('truncated_body', `Content-Length ${declared} but ${bodyLength} bytes follow`, known))
    bodyLength = declared
  } else if (options.framing === 'stream') {
    return fail(decodeError('bad_content_length', 'Content-Length is required on a stream transport', known))
  }

  const invalid = validate(head.kind, method, headers)
  if (invalid !== null) return fail(invalid)

  const body = Buffer.from(buf.subarray(bodyStart, bodyStart + bodyLength))
  const message: SipMessage =
    head.kind === 'request'
      ? { kind: 'request', method: head.method, uri: head.uri, headers, body }
      : { kind: 'response', status: head.status, reason: head.reason, headers, body }
  return { ok: true, message }
}

/**
 * What can be read of a request too large to decode (its first `maxBytes`): the method and the sound header
 * lines, so the 513 can be sent along its Via. Nothing for a response or for bytes that do not start as a request.
 */
export function salvageRequest(bytes: Uint8Array, maxBytes = MAX_MESSAGE_BYTES): { method?: string; headers?: SipHeader[] } {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, maxBytes))
  let start = 0
  while (buf[start] === 0x0d || buf[start] === 0x0a) start++
  const end = findHeaderEnd(buf, start)
  const lines = unfold(buf.toString('utf8', start, end === null ? buf.length : end.at))
  // Without a blank line the last line may be cut in the middle: it is left out.
  if (end === null) lines.pop()
  const method = /^([A-Za-z0-9\-.!%*_+`'~]+) \S+ SIP\/[0-9]+\.[0-9]+$/.exec(lines.shift() ?? '')?.[1]
  if (method === undefined) return {}
  return { method, headers: readHeaders(lines.slice(0, MAX_HEADERS)).headers }
}

/** Serializes a message with CRLF line ends; Content-Length is always written from the body's real length. */
export function encodeSipMessage(message: SipMessage): Buffer {
  const start = message.kind === 'request' ? `${message.method} ${message.uri} SIP/2.0` : `SIP/2.0 ${message.status} ${message.reason}`
  let head = `${start}\r\n`
  for (const h of message.headers) {
    if (h.name === 'Content-Length') continue
    head += `${h.name}: ${h.value}\r\n`
  }
  head += `Content-Length: ${message.body.length}\r\n\r\n`
  return Buffer.concat([Buffer.from(head, 'utf8'), message.body])
}

function fail(error: SipDecodeError): SipDecodeResult {
  return { ok: false, error }
}

/** Splits the header section into lines, joining folded lines (leading SP/HTAB) with one space. */
function unfold(text: string): string[] {
  const lines: string[] = []
  for (const raw of text.split(/\r?\n/)) {
    if ((raw.startsWith(' ') || raw.startsWith('\t')) && lines.length > 1) {
      lines[lines.length - 1] = `${lines[lines.length - 1]!.trimEnd()} ${raw.trim()}`
    } else lines.push(raw)
  }
  return lines
}

/** The header lines that are sound, and what is wrong with the first that is not. */
function readHeaders(lines: readonly string[]): { headers: SipHeader[]; problem: { code: SipDecodeErrorCode; reason: string } | null } {
  const headers: SipHeader[] = []
  let problem: { code: SipDecodeErrorCode; reason: string } | null = null
  for (const line of lines) {
    const colon = line.indexOf(':')
    const name = colon < 0 ? '' : line.slice(0, colon).trimEnd()
    let wrong: { code: SipDecodeErrorCode; reason: string } | null = null
    if (!isToken(name)) wrong = { code: 'bad_header', reason: `bad header line ${JSON.stringify(line.slice(0, 40))}` }
    else if (line.length > MAX_HEADER_LENGTH) wrong = { code: 'header_too_long', reason: `${name} is over ${MAX_HEADER_LENGTH} characters` }
    else if (hasControlCharacter(line)) wrong = { code: 'control_character', reason: `a control character in ${name}` }
    if (wrong === null) headers.push({ name: canonicalHeaderName(name), value: line.slice(colon + 1).trim() })
    else problem ??= wrong
  }
  return { headers, problem }
}

type StartLine = { kind: 'request'; method: string; uri: string } | { kind: 'response'; status: number; reason: string }

/**
 * Parses the start line strictly: single spaces between elements (RFC 4475 sections 3.1.2.8-3.1.2.10 allow
 * rejecting extra LWS, and a lenient reading of a Request-URI is ambiguous).
 */
function parseStartLine(line: string): StartLine | SipDecodeError {
  if (line.startsWith('SIP/')) {
    const m = /^SIP\/([0-9]+\.[0-9]+) ([0-9]+)(?: (.*))?$/.exec(line)
    if (m === null) return decodeError('bad_start_line', 'bad status line')
    if (m[1] !== '2.0') return decodeError('bad_version', `SIP/${m[1]} is not supported`)
    const status = Number(m[2])
    if (m[2]!.length !== 3 || status < 100 || status > 699) return decodeError('bad_status', `status ${m[2]!.slice(0, 12)} out of range`)
    return { kind: 'response', status, reason: m[3] ?? '' }
  }
  // The method is kept when it reads as one, so the 400 can be sent (RFC 4475 sections 3.1.2.8-3.1.2.10).
  const parts = line.split(' ')
  const known = { method: isToken(parts[0] ?? '') ? parts[0] : undefined }
  if (hasControlCharacter(line)) return decodeError('bad_start_line', 'a control character in the request line', known)
  if (parts.length !== 3 || known.method === undefined)
    return decodeError('bad_start_line', `bad request line ${JSON.stringify(line.slice(0, 60))}`, known)
  const [method, uri, version] = parts as [string, string, string]
  const versionMatch = /^SIP\/([0-9]+\.[0-9]+)$/i.exec(version)
  if (versionMatch === null) return decodeError('bad_start_line', 'bad SIP version in request line', { method })
  if (versionMatch[1] !== '2.0') return decodeError('bad_version', `SIP/${versionMatch[1]} is not supported`, { method })
  if (parseUri(uri) === null) return decodeError('bad_uri', `bad Request-URI ${JSON.stringify(uri.slice(0, 60))}`, { method })
  return { kind: 'request', method, uri }
}

/** The headers every request and response must carry (RFC 3261 section 8.1.1), each parsed once. */
function validate(kind: 'request' | 'response', method: string | undefined, headers: SipHeader[]): SipDecodeError | null {
  const known = { method, headers }
  const msg = { headers }
  for (const name of ['Call-ID', 'CSeq', 'From', 'To', 'Via']) {
    if (getHeader(msg, name) === undefined) return decodeError('missing_header', `${name} is missing`, known)
  }
  const cseq = parseCSeq(getHeader(msg, 'CSeq')!)
  if (cseq === null) return decodeError('bad_cseq', 'bad CSeq', known)
  if (kind === 'request' && cseq.method !== method) {
    return decodeError('cseq_method_mismatch', `CSeq method ${cseq.method} differs from ${method}`, known)
  }
  for (const name of ['From', 'To']) {
    const values = getHeaderValues(msg, name)
    if (values?.length !== 1 || parseNameAddr(values[0]!) === null) return decodeError('bad_address', `bad ${name}`, known)
  }
  const vias = getHeaderValues(msg, 'Via')
  if (vias === null || vias.some((v) => parseVia(v) === null)) return decodeError('bad_via', 'bad Via', known)
  const contacts = getHeaderValues(msg, 'Contact')
  if (contacts === null || contacts.some((c) => c !== '*' && parseNameAddr(c) === null))
    return decodeError('bad_address', 'bad Contact', known)
  return null
}
