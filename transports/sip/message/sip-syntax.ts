/**
 * The small lexical pieces of RFC 3261's grammar (section 25) that every header parser shares: tokens, quoted
 * strings, comma lists and `;name=value` parameters, each tolerant of the LWS the grammar allows around separators.
 * Scanners return `null` for what does not parse; the codecs turn that into a typed error.
 */

/** `token` characters (RFC 3261 section 25.1): alphanumerics and `-.!%*_+\`'~`. */
const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]+$/

/** True when `s` is a non-empty RFC 3261 token. */
export function isToken(s: string): boolean {
  return TOKEN.test(s)
}

/** Folded or plain whitespace, as the grammar's LWS and SWS. */
export function isSpace(ch: string | undefined): boolean {
  return ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n'
}

/**
 * Splits a header value at the commas that separate list elements, ignoring commas inside quoted strings and
 * `<...>`. Returns `null` for an unterminated quote or bracket; an empty element is returned as `''`.
 */
export function splitList(value: string): string[] | null {
  const parts: string[] = []
  let start = 0
  let quoted = false
  let angle = false
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]
    if (quoted) {
      if (ch === '\\') i++
      else if (ch === '"') quoted = false
    } else if (ch === '"') quoted = true
    else if (ch === '<') angle = true
    else if (ch === '>') angle = false
    else if (ch === ',' && !angle) {
      parts.push(value.slice(start, i).trim())
      start = i + 1
    }
  }
  if (quoted || angle) return null
  parts.push(value.slice(start).trim())
  return parts
}

/** Reads a quoted string starting at `at` (which must be `"`): its unescaped text and the index after it. */
export function readQuoted(s: string, at: number): { text: string; end: number } | null {
  if (s[at] !== '"') return null
  let text = ''
  for (let i = at + 1; i < s.length; i++) {
    const ch = s[i]!
    if (ch === '\\') {
      if (i + 1 >= s.length) return null
      text += s[++i]
    } else if (ch === '"') return { text, end: i + 1 }
    else text += ch
  }
  return null
}

/** Quotes `s` as a quoted-string, escaping `"` and `\`. */
export function quote(s: string): string {
  return `"${s.replace(/["\\]/g, (c) => `\\${c}`)}"`
}

/** Parameters in order of appearance; a parameter without `=` has the value `null`. Names are lower-cased. */
export type Params = Map<string, string | null>

/**
 * Parses `*( SWS ";" SWS name [ SWS "=" SWS value ] )` from `s` (which starts at the first `;` or is empty). A value
 * may be a token, a host or a quoted string (kept with its quotes unless `unquote`). Returns `null` on an empty
 * parameter (`;;`), a name that is not a token or an unterminated quote.
 */
export function parseParams(s: string, unquoteValues = true): Params | null {
  const params: Params = new Map()
  let i = 0
  const skip = (): void => {
    while (isSpace(s[i])) i++
  }
  skip()
  while (i < s.length) {
    if (s[i] !== ';') return null
    i++
    skip()
    let nameEnd = i
    while (nameEnd < s.length && !isSpace(s[nameEnd]) && s[nameEnd] !== '=' && s[nameEnd] !== ';') nameEnd++
    const name = s.slice(i, nameEnd)
    if (!isToken(name)) return null
    i = nameEnd
    skip()
    let value: string | null = null
    if (s[i] === '=') {
      i++
      skip()
      if (s[i] === '"') {
        const q = readQuoted(s, i)
        if (q === null) return null
        value = unquoteValues ? q.text : s.slice(i, q.end)
        i = q.end
      } else {
        let end = i
        while (end < s.length && !isSpace(s[end]) && s[end] !== ';') end++
        value = s.slice(i, end)
        if (value === '') return null
        i = end
      }
      skip()
    }
    params.set(name.toLowerCase(), value)
  }
  return params
}

/** Serializes parameters as `;name=value`, quoting values that are not tokens (or hosts, for `received`). */
export function formatParams(params: ReadonlyMap<string, string | null>): string {
  let out = ''
  for (const [name, value] of params) {
    if (value === null) out += `;${name}`
    else out += `;${name}=${isToken(value) || /^[0-9A-Fa-f:.[\]]+$/.test(value) ? value : quote(value)}`
  }
  return out
}

/** A control character the grammar never allows bare: C0 but HTAB, and DEL (CR and LF end lines before this). */
function isControl(code: number): boolean {
  return (code < 0x20 && code !== 0x09) || code === 0x7f
}

/**
 * True when `line` holds a control character outside a quoted-pair. RFC 3261's `quoted-pair` (section 25.1)
 * escapes any of them inside a quoted string, and RFC 4475 section 3.1.1.2 (intmeth) sends `\` NUL, `\` BEL
 * and `\` DEL in a display name as valid; anywhere else a NUL or a BEL is refused, since the code that reads
 * header values after us (logs, webhooks, the console) does not expect them.
 */
export function hasControlCharacter(line: string): boolean {
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const code = line.charCodeAt(i)
    if (quoted && code === 0x5c) i++
    else if (code === 0x22) quoted = !quoted
    else if (isControl(code)) return true
  }
  return false
}
