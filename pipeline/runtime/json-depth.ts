/**
 * A bound on how deeply JSON nests, checked on the text before anything recursive touches it. JSON.parse itself
 * is iterative in V8, but what comes after is not (a structured clone, JSON.stringify into a webhook, a deep
 * merge): a 20,000-deep object overflowed the stack there, and a 1,000-deep one was stored and sent on.
 */

/** Nesting levels JSON from outside may have: `{}` is one level, `{"a":[]}` two. */
export const MAX_JSON_DEPTH = 32

const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
const CLOSE_OBJECT = 0x7d
const CLOSE_ARRAY = 0x5d
const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * True when `json` nests brackets deeper than `max` outside strings. One pass, no recursion, no parse, so the
 * deepest input costs no more than its length; text that is not JSON is for the parser to refuse. Bytes are read as
 * UTF-8 without decoding: brackets, quotes and backslashes are ASCII, and no byte of a multi-byte character is.
 */
export function jsonNestsDeeperThan(json: string | Uint8Array, max = MAX_JSON_DEPTH): boolean {
  let depth = 0
  let inString = false
  const text = typeof json === 'string' ? json : undefined
  const bytes = typeof json === 'string' ? undefined : json
  for (let i = 0; i < json.length; i++) {
    const c = text !== undefined ? text.charCodeAt(i) : (bytes as Uint8Array)[i]
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) {
      inString = true
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) return true
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--
    }
  }
  return false
}
