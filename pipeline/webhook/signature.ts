import { createHmac, timingSafeEqual } from 'node:crypto'

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

/** Checks a signature header the way a customer backend should (used by tests and the CLI's local server). */
export function verifyWebhook(
  secret: string,
  rawBody: string | Buffer,
  header: string | undefined,
  options: { toleranceSec?: number; nowMs?: number } = {},
): boolean {
  const m = /t=(\d+),v1=([a-fA-F0-9]+)/.exec(header ?? '')
  if (m === null) return false
  const t = Number(m[1])
  const now = Math.floor((options.nowMs ?? Date.now()) / 1000)
  if (Math.abs(now - t) > (options.toleranceSec ?? 300)) return false
  const expected = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest()
  const given = Buffer.from(m[2] as string, 'hex')
  return given.length === expected.length && timingSafeEqual(given, expected)
}
