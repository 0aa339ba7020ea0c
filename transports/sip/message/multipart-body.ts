/**
 * Pure parser for a MIME multipart body (RFC 2046 section 5.1), as SIP carries one (RFC 5621): an SDP beside an
 * ISUP part (SIP-I, ITU-T Q.1912.5; SIP-T, RFC 3372 and RFC 3204), or beside a signature. Bytes in, parts out,
 * never a throw. Bounded: at most MAX_PARTS parts, each part's header section at most MAX_PART_HEADER_BYTES;
 * the body itself is already bounded by the message codec (64 KiB).
 */
import { parseParams } from './sip-syntax.js'

/** Most parts read from one multipart body; a real SIP-I INVITE has two or three. */
export const MAX_PARTS = 16

/** Longest header section of one part: Content-Type, Content-Disposition and a few more are a few hundred bytes. */
export const MAX_PART_HEADER_BYTES = 4_096

/** One part: its headers (names lower-cased, values trimmed, in order) and its body bytes. */
export interface MultipartPart {
  readonly headers: readonly { readonly name: string; readonly value: string }[]
  readonly body: Buffer
}

/** The parts, or why the body is not a multipart the parser accepts. */
export type MultipartResult = { readonly ok: true; readonly parts: MultipartPart[] } | { readonly ok: false; readonly reason: string }

/** A media type split into its lower-cased `type/subtype` and its parameters (names lower-cased, values unquoted). */
export function parseMediaType(value: string): { type: string; params: Map<string, string | null> } | null {
  const semi = value.indexOf(';')
  const type = (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase()
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(type)) return null
  const params = semi < 0 ? new Map<string, string | null>() : parseParams(value.slice(semi))
  return params === null ? null : { type, params }
}

/**
 * Splits `body` at `boundary` (1-70 characters, RFC 2046 section 5.1.1). The preamble before the first delimiter
 * and the epilogue after the close delimiter are ignored; a delimiter line may end in spaces or tabs. Lines end
 * in CRLF; a lone LF is accepted too, as some stacks send it. A body without its close delimiter is refused:
 * the message was cut.
 */
export function parseMultipart(body: Buffer, boundary: string): MultipartResult {
  if (boundary.length < 1 || boundary.length > 70) return { ok: false, reason: 'the boundary must be 1-70 characters' }
  const dashBoundary = Buffer.from(`--${boundary}`, 'latin1')
  const delimiters: { start: number; contentStart: number; close: boolean }[] = []
  let from = 0
  for (;;) {
    const at = body.indexOf(dashBoundary, from)
    if (at < 0) break
    from = at + dashBoundary.length
    // A delimiter starts a line: at the very start of the body, or right after a line end.
    if (at !== 0 && body[at - 1] !== 0x0a) continue
    let i = at + dashBoundary.length
    const close = body[i] === 0x2d && body[i + 1] === 0x2d
    if (close) i += 2
    while (body[i] === 0x20 || body[i] === 0x09) i++
    // The boundary must be followed by the line end (or the end of the body, for a close delimiter): a longer
    // string that merely starts with it is body text.
    if (i < body.length && body[i] !== 0x0d && body[i] !== 0x0a) continue
    if (body[i] === 0x0d) i++
    if (body[i] === 0x0a) i++
    delimiters.push({ start: at, contentStart: i, close })
    if (close) break
    if (delimiters.length > MAX_PARTS) return { ok: false, reason: `more than ${MAX_PARTS} parts` }
  }
  if (delimiters.length === 0) return { ok: false, reason: 'no boundary delimiter' }
  if (!delimiters.at(-1)!.close) return { ok: false, reason: 'no close delimiter: the body is cut' }
  const parts: MultipartPart[] = []
  for (let k = 0; k + 1 < delimiters.length; k++) {
    const { contentStart } = delimiters[k]!
    // The line end before the next delimiter belongs to the delimiter, not to the part (section 5.1.1).
    let end = delimiters[k + 1]!.start
    if (body[end - 1] === 0x0a) end--
    if (body[end - 1] === 0x0d) end--
    const part = readPart(body.subarray(contentStart, Math.max(contentStart, end)))
    if (typeof part === 'string') return { ok: false, reason: `part ${k + 1}: ${part}` }
    parts.push(part)
  }
  return { ok: true, parts }
}

/** One part's header section and body; a part that starts with a blank line has no headers (text/plain). */
function readPart(bytes: Buffer): MultipartPart | string {
  let headerEnd: number
  let bodyStart: number
  if (bytes[0] === 0x0a || (bytes[0] === 0x0d && bytes[1] === 0x0a)) {
    headerEnd = 0
    bodyStart = bytes[0] === 0x0a ? 1 : 2
  } else {
    const crlf = bytes.indexOf('\r\n\r\n')
    const lf = bytes.indexOf('\n\n')
    if (crlf < 0 && lf < 0) return 'no blank line after its headers'
    const useLf = lf >= 0 && (crlf < 0 || lf < crlf)
    headerEnd = useLf ? lf : crlf
    bodyStart = headerEnd + (useLf ? 2 : 4)
  }
  if (headerEnd > MAX_PART_HEADER_BYTES) return `headers over ${MAX_PART_HEADER_BYTES} bytes`
  const headers: { name: string; value: string }[] = []
  for (const line of bytes.toString('utf8', 0, headerEnd).split(/\r?\n/)) {
    if (line === '') continue
    if ((line.startsWith(' ') || line.startsWith('\t')) && headers.length > 0) {
      const last = headers[headers.length - 1]!
      last.value = `${last.value} ${line.trim()}`
      continue
    }
    const colon = line.indexOf(':')
    if (colon <= 0) return `bad header line ${JSON.stringify(line.slice(0, 40))}`
    headers.push({ name: line.slice(0, colon).trim().toLowerCase(), value: line.slice(colon + 1).trim() })
  }
  return { headers, body: Buffer.from(bytes.subarray(bodyStart)) }
}
