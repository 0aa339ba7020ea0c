import { createHmac } from 'node:crypto'

/** Name of the header that carries the webhook signature. */
export const SIGNATURE_HEADER = 'service-signature'

/**
 * The `service-signature` value for a body: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.<raw body>">`, keyed
 * with the agent's webhook secret. Seconds and lowercase hex match what published server SDKs check.
 */
export function signWebhook(secret: string, rawBody: string | Buffer, nowMs: number = Date.now()): string {
  const t = Math.floor(nowMs / 1000)
  const mac = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest('hex')
  return `t=${t},v1=${mac}`
}
