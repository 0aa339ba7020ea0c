/**
 * Pure codec for the Digest authentication headers (RFC 3261 sections 20.27, 20.28, 20.44 and 22.4, with the
 * RFC 7616 / RFC 8760 parameters): `WWW-Authenticate` / `Proxy-Authenticate` challenges and `Authorization` /
 * `Proxy-Authorization` credentials, both `Digest name="value", name=token, ...`.
 */
import { isSpace, isToken, quote, readQuoted } from './sip-syntax.js'

/** A parsed challenge or credentials: the scheme and its parameters (names lower-cased, values unquoted). */
export interface AuthHeader {
  readonly scheme: string
  readonly params: ReadonlyMap<string, string>
}

/** Parses `Digest a="b", c=d`; `null` when it is not `scheme 1#(name=value)` or a name repeats. */
export function parseAuthHeader(value: string): AuthHeader | null {
  const s = value.trim()
  const space = s.search(/\s/)
  if (space <= 0) return null
  const scheme = s.slice(0, space)
  if (!isToken(scheme)) return null
  const params = new Map<string, string>()
  let i = space
  for (;;) {
    while (isSpace(s[i])) i++
    const eq = s.indexOf('=', i)
    if (eq < 0) return null
    const name = s.slice(i, eq).trim().toLowerCase()
    if (!isToken(name) || params.has(name)) return null
    i = eq + 1
    while (isSpace(s[i])) i++
    let val: string
    if (s[i] === '"') {
      const q = readQuoted(s, i)
      if (q === null) return null
      val = q.text
      i = q.end
    } else {
      const end = s.slice(i).search(/[\s,]|$/)
      val = s.slice(i, i + end)
      if (val === '') return null
      i += end
    }
    params.set(name, val)
    while (isSpace(s[i])) i++
    if (i >= s.length) break
    if (s[i] !== ',') return null
    i++
  }
  return params.size === 0 ? null : { scheme, params }
}

/** Parameters written without quotes (RFC 7616 section 3.4: these are tokens; everything else is quoted). */
const UNQUOTED = new Set(['algorithm', 'nc', 'stale'])

/**
 * Serializes `scheme name="value", ...`. `qop` is quoted in a challenge (a list) and a token in credentials
 * (RFC 7616 sections 3.3 and 3.4), so the caller says which one it writes.
 */
export function formatAuthHeader(
  scheme: string,
  params: ReadonlyArray<readonly [string, string]>,
  kind: 'challenge' | 'credentials',
): string {
  const parts = params.map(([name, value]) => {
    const bare = UNQUOTED.has(name) || (name === 'qop' && kind === 'credentials')
    return `${name}=${bare ? value : quote(value)}`
  })
  return `${scheme} ${parts.join(', ')}`
}
