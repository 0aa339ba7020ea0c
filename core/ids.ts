import { createHash, randomBytes } from 'node:crypto'

/** A new opaque identifier such as `agt_3q2x...`: 96 random bits, URL-safe. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`
}

/** A new secret token such as an API key: 256 random bits, URL-safe. */
export function newSecret(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`
}

/** SHA-256 of a high-entropy token, hex; what the store keeps instead of the token. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}
