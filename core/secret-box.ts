/**
 * Secrets the gateway must read back in clear (a SIP trunk's outbound password answers the peer's digest
 * challenge, whose realm is only known then) are sealed with AES-256-GCM under a key from the environment, so
 * a copy of the database alone reveals none of them. A sealed value is `v1.<iv>.<tag>.<ciphertext>`, base64url.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

/** Prefix of every sealed value; a new scheme gets a new one and old rows stay readable. */
const VERSION = 'v1'

/** A 32-byte key from 64 hex digits or base64 (either alphabet); throws with the reason. */
export function parseSecretKey(raw: string): Buffer {
  const text = raw.trim()
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64')
  if (key.length !== 32) throw new Error('must be 32 bytes: 64 hex digits or 44 base64 characters (openssl rand -hex 32)')
  return key
}

/** Seals `plain` under `key` with a fresh random IV. */
export function sealSecret(key: Buffer, plain: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
  return [VERSION, iv, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.')
}

/** Opens a value `sealSecret` made; throws when it was sealed under another key or altered. */
export function openSecret(key: Buffer, sealed: string): string {
  const [version, iv, tag, body] = sealed.split('.')
  if (version !== VERSION || iv === undefined || tag === undefined || body === undefined) throw new Error('not a sealed secret')
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
  decipher.setAuthTag(Buffer.from(tag, 'base64url'))
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')
}
