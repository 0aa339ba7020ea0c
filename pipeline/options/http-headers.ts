import { z } from 'zod'

// RFC 9110 token characters.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const FORBIDDEN_VALUE_CHARS = /[\r\n\0]/
const MAX_VALUE_LENGTH = 8192

/** Headers the gateway sets itself on webhook requests; a custom header may not replace them. */
export const RESERVED_HEADERS: readonly string[] = [
  'content-type',
  'content-length',
  'host',
  'connection',
  'transfer-encoding',
  'service-signature',
]

/**
 * Custom webhook headers: names must be HTTP tokens and not reserved, values carry no CR, LF or NUL
 * (header injection) and stay under 8 KiB.
 */
export function customHeaders() {
  return z.record(z.string(), z.string()).superRefine((headers, ctx) => {
    for (const [name, value] of Object.entries(headers)) {
      if (!TOKEN.test(name)) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'is not a valid HTTP header name' })
      } else if (RESERVED_HEADERS.includes(name.toLowerCase())) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'is set by the gateway and cannot be overridden' })
      }
      if (FORBIDDEN_VALUE_CHARS.test(value)) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'must not contain CR, LF or NUL characters' })
      } else if (value.length > MAX_VALUE_LENGTH) {
        ctx.addIssue({ code: 'custom', path: [name], message: `must be at most ${MAX_VALUE_LENGTH} characters` })
      }
    }
  })
}
