import { RESERVED_HEADERS } from '../options/http-headers.js'
import { SIGNATURE_HEADER, signWebhook } from './signature.js'

/** User agent of every webhook request the gateway sends. */
export const WEBHOOK_USER_AGENT = 'voxgate-webhooks/1'

/**
 * Headers of a signed webhook request: the caller's custom headers first, then the gateway's own, which a
 * custom header can never replace. The signature is computed over the exact body bytes that are sent.
 */
export function signedHeaders(
  secret: string,
  body: string,
  customHeaders: Record<string, string> | undefined,
  extra: Record<string, string> = {},
  nowMs: number = Date.now(),
): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(customHeaders ?? {})) {
    if (!RESERVED_HEADERS.includes(k.toLowerCase())) headers[k] = v
  }
  Object.assign(headers, extra)
  headers['content-type'] = 'application/json'
  headers['user-agent'] = WEBHOOK_USER_AGENT
  headers[SIGNATURE_HEADER] = signWebhook(secret, body, nowMs)
  return headers
}
