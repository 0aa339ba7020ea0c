/**
 * Pure codec for the structured values inside SIP headers (RFC 3261 sections 19.1 and 20): SIP/SIPS/tel URIs,
 * name-addr (From, To, Contact, Route), Via and CSeq. Each parser returns `null` for what does not parse, so the
 * message codec can answer 400 instead of throwing.
 */
import { formatParams, isSpace, isToken, type Params, parseParams, quote, readQuoted } from './sip-syntax.js'

/** A parsed URI. For `sip:`/`sips:` every field is filled; for other schemes (`tel:`) `host` is empty. */
export interface SipUri {
  /** Lower-cased scheme: `sip`, `sips`, `tel`, ... */
  readonly scheme: string
  /** The user part as written (still %-escaped); `undefined` when there is none. */
  readonly user?: string | undefined
  readonly password?: string | undefined
  /** Host name, IPv4 address or bracketed IPv6 reference, lower-cased. */
  readonly host: string
  readonly port?: number | undefined
  /** URI parameters (`;transport=udp;lr`), names lower-cased. */
  readonly params: Params
  /** URI headers (`?subject=x`), raw. */
  readonly headers?: string | undefined
}

/** A `name-addr` or `addr-spec` with its header parameters (`;tag=`, `;expires=`, `;q=`). */
export interface NameAddr {
  readonly displayName?: string | undefined
  readonly uri: SipUri
  readonly params: Params
}

/** One Via value: `SIP/2.0/UDP host:port;branch=...`. */
export interface Via {
  /** Upper-cased transport: UDP, TCP, TLS, SCTP, WS, WSS or an extension. */
  readonly transport: string
  readonly host: string
  readonly port?: number | undefined
  readonly params: Params
}

/** The CSeq header: sequence number and method. */
export interface CSeq {
  readonly seq: number
  readonly method: string
}

/** RFC 3261 section 8.1.1.5: a CSeq sequence number is below 2**31. */
export const MAX_CSEQ = 2 ** 31 - 1

const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-.]+)$/
const USERINFO = /^[A-Za-z0-9\-_.!~*'()%&=+$,;?/]*$/
const PASSWORD = /^[A-Za-z0-9\-_.!~*'()%&=+$,]*$/

/** Parses a URI with no surrounding whitespace or brackets. */
export function parseUri(text: string): SipUri | null {
  const colon = text.indexOf(':')
  if (colon <= 0) return null
  const scheme = text.slice(0, colon).toLowerCase()
  if (!/^[a-z][a-z0-9+\-.]*$/.test(scheme)) return null
  const rest = text.slice(colon + 1)
  if (rest === '' || /[\s<>"]/.test(rest)) return null
  if (scheme !== 'sip' && scheme !== 'sips') {
    const semi = rest.indexOf(';')
    const params = semi < 0 ? new Map() : parseParams(rest.slice(semi))
    if (params === null) return null
    return { scheme, user: semi < 0 ? rest : rest.slice(0, semi), host: '', params }
  }
  const at = rest.indexOf('@')
  let user: string | undefined
  let password: string | undefined
  let hostPart = rest
  if (at >= 0) {
    const userinfo = rest.slice(0, at)
    hostPart = rest.slice(at + 1)
    const pw = userinfo.indexOf(':')
    user = pw < 0 ? userinfo : userinfo.slice(0, pw)
    password = pw < 0 ? undefined : userinfo.slice(pw + 1)
    if (user === '' || !USERINFO.test(user) || (password !== undefined && !PASSWORD.test(password))) return null
  }
  const q = hostPart.indexOf('?')
  const headers = q < 0 ? undefined : hostPart.slice(q + 1)
  if (q >= 0) hostPart = hostPart.slice(0, q)
  const semi = hostPart.indexOf(';')
  const hostport = semi < 0 ? hostPart : hostPart.slice(0, semi)
  const params = semi < 0 ? new Map() : parseParams(hostPart.slice(semi), false)
  if (params === null) return null
  const hp = parseHostPort(hostport)
  if (hp === null) return null
  return { scheme, user, password, host: hp.host, port: hp.port, params, headers }
}

/** Splits `host[:port]`; `null` for a bad host or a port outside 1-65535. */
export function parseHostPort(text: string): { host: string; port?: number | undefined } | null {
  let host = text
  let port: number | undefined
  const close = text.lastIndexOf(']')
  const colon = text.lastIndexOf(':')
  if (colon > close && (text.startsWith('[') || text.indexOf(':') === colon)) {
    host = text.slice(0, colon)
    const digits = text.slice(colon + 1)
    if (!/^[0-9]{1,5}$/.test(digits)) return null
    port = Number(digits)
    if (port < 1 || port > 65535) return null
  }
  if (!HOST.test(host)) return null
  return { host: host.toLowerCase(), port }
}

/** Serializes a URI (the inverse of `parseUri` up to parameter quoting). */
export function formatUri(uri: SipUri): string {
  if (uri.scheme !== 'sip' && uri.scheme !== 'sips') return `${uri.scheme}:${uri.user ?? ''}${formatParams(uri.params)}`
  const userinfo = uri.user === undefined ? '' : `${uri.user}${uri.password === undefined ? '' : `:${uri.password}`}@`
  const port = uri.port === undefined ? '' : `:${uri.port}`
  const headers = uri.headers === undefined ? '' : `?${uri.headers}`
  return `${uri.scheme}:${userinfo}${uri.host}${port}${formatParams(uri.params)}${headers}`
}

/** Undoes `%HH` escapes in a user part (RFC 3261 section 19.1.4 compares users unescaped); `null` if malformed. */
export function unescapeUser(user: string): string | null {
  try {
    return decodeURIComponent(user)
  } catch {
    return null
  }
}

/**
 * Parses one `name-addr` / `addr-spec` value: `"Name" <sip:u@h>;tag=1`, `Name <sip:u@h>` or `sip:u@h;tag=1`
 * (without brackets the parameters belong to the header, not the URI: RFC 3261 section 20.10).
 */
export function parseNameAddr(text: string): NameAddr | null {
  const s = text.trim()
  let i = 0
  let displayName: string | undefined
  if (s[0] === '"') {
    const q = readQuoted(s, 0)
    if (q === null) return null
    displayName = q.text
    i = q.end
    while (isSpace(s[i])) i++
    if (s[i] !== '<') return null
  }
  const open = s.indexOf('<', i)
  if (open >= 0) {
    if (displayName === undefined) {
      const tokens = s.slice(0, open).trim()
      if (tokens !== '') {
        if (!tokens.split(/\s+/).every(isToken)) return null
        displayName = tokens
      }
    }
    const close = s.indexOf('>', open)
    if (close < 0) return null
    const uri = parseUri(s.slice(open + 1, close))
    const params = parseParams(s.slice(close + 1))
    if (uri === null || params === null) return null
    return { displayName, uri, params }
  }
  if (displayName !== undefined) return null
  let end = 0
  while (end < s.length && s[end] !== ';' && !isSpace(s[end])) end++
  const uri = parseUri(s.slice(0, end))
  const params = parseParams(s.slice(end))
  if (uri === null || params === null) return null
  return { uri, params }
}

/** Serializes a name-addr, always with brackets so URI and header parameters cannot be confused. */
export function formatNameAddr(value: NameAddr): string {
  const name = value.displayName === undefined || value.displayName === '' ? '' : `${quote(value.displayName)} `
  return `${name}<${formatUri(value.uri)}>${formatParams(value.params)}`
}

/** Parses one Via value; LWS is allowed around the `/` separators (RFC 4475 section 3.1.1.1). */
export function parseVia(text: string): Via | null {
  const m = /^SIP\s*\/\s*2\.0\s*\/\s*([A-Za-z0-9\-.!%*_+`'~]+)\s+([^;\s]+)\s*(;.*)?$/is.exec(text.trim())
  if (m === null) return null
  const hp = parseHostPort(m[2]!)
  const params = parseParams(m[3] ?? '')
  if (hp === null || params === null) return null
  if (params.has('branch') && !params.get('branch')) return null
  return { transport: m[1]!.toUpperCase(), host: hp.host, port: hp.port, params }
}

/** Serializes a Via value. */
export function formatVia(via: Via): string {
  return `SIP/2.0/${via.transport} ${via.host}${via.port === undefined ? '' : `:${via.port}`}${formatParams(via.params)}`
}

/** Parses `CSeq: 0009 INVITE` (leading zeros allowed); `null` beyond 2**31-1 or for a method that is no token. */
export function parseCSeq(text: string): CSeq | null {
  const m = /^([0-9]{1,10})\s+(\S+)$/.exec(text.trim())
  if (m === null || !isToken(m[2]!)) return null
  const seq = Number(m[1])
  if (seq > MAX_CSEQ) return null
  return { seq, method: m[2]! }
}
