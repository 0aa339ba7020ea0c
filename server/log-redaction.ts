/**
 * A backstop for logs: no log line, at any level, holds a card number or a social security number,
 * whoever put it there (a vendor error that quotes a transcript, a backend error body that echoes the caller). The
 * gateway logs no caller text on purpose; this hook catches what slips through. String values of a line's fields
 * (three levels deep), its message and an error's message and stack go through the detector with its defaults
 * (cards, with codes and expiries near them, and SSNs); numbers, ids and phone numbers in fields are left as they
 * are. Only lines that are written pay for it (pino calls the hook for enabled levels only), about 20 us a line.
 */
import type { LoggerOptions } from 'pino'
import { redact } from '../pipeline/index.js'

const MAX_DEPTH = 3
/** Strings longer than this are cut before redaction: a log line is no place for a long text. */
const MAX_CHARS = 4096
/** Digits, or words a number can be said with (the detector reads both). */
const MAY_HOLD_NUMBER = /\d|\b(?:zero|nought|oh|o|one|two|three|four|five|six|seven|eight|nine|double|triple)\b/i

/** An SDES key in an SDP's `a=crypto` line (RFC 4568 `inline:<base64 key and salt>`): SRTP's master key. */
const SDES_INLINE_KEY = /(inline:)[A-Za-z0-9+/=]+/gi

function redactString(s: string): string {
  const cut = s.length > MAX_CHARS ? `${s.slice(0, MAX_CHARS)}...` : s
  // Whoever logs an SDP (a debug line, an error quoting a body) must not log the call's SRTP keys.
  const text = cut.includes('nline:') ? cut.replace(SDES_INLINE_KEY, '$1[redacted]') : cut
  // Most lines have no digit and no number word: nothing to look at.
  return MAY_HOLD_NUMBER.test(text) ? redact(text).text : text
}

/** A copy of `value` with every string redacted (objects and arrays to {@link MAX_DEPTH} levels). */
export function redactLogValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactString(value)
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return value
  if (value instanceof Error) {
    // A copy that is still an Error, so pino's serializer writes it as it writes any error.
    const copy = new Error(redactString(value.message))
    copy.name = value.name
    copy.stack = value.stack === undefined ? undefined : redactString(value.stack)
    const code = (value as { code?: unknown }).code
    if (code !== undefined) Object.assign(copy, { code })
    return copy
  }
  if (Array.isArray(value)) return value.map((v) => redactLogValue(v, depth + 1))
  if (value instanceof Date || Buffer.isBuffer(value)) return value
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) out[k] = redactLogValue(v, depth + 1)
  return out
}

/** pino options that redact every line's arguments before it is written (give them to `createLogger`). */
export function privacyLogOptions(): Pick<LoggerOptions, 'hooks'> {
  return {
    hooks: {
      logMethod(args, method) {
        method.apply(this, args.map((a) => redactLogValue(a)) as Parameters<typeof method>)
      },
    },
  }
}
