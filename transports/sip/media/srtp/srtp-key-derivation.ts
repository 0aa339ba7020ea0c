/**
 * The SRTP key derivation function of RFC 3711 section 4.3 for the AES_CM_128 suites, with a key derivation rate
 * of 0 (RFC 4568's default, and the only rate SDES peers use in practice): the session keys are derived once,
 * from the master key and salt, and never again. The PRF is AES in counter mode (section 4.3.3).
 */
import { aesCm } from './srtp-aes-cm.js'

/** Octets of the AES-128 master and session keys. */
export const SRTP_KEY_BYTES = 16
/** Octets of the master and session salts (112 bits). */
export const SRTP_SALT_BYTES = 14
/** Octets of the HMAC-SHA1 session authentication key (RFC 3711 section 8.2: n_a = 160). */
export const SRTP_AUTH_KEY_BYTES = 20

/** The labels of RFC 3711 section 4.3.1 (SRTP) and 4.3.2 (SRTCP). */
export const SrtpLabel = {
  rtpEncryption: 0x00,
  rtpAuthentication: 0x01,
  rtpSalt: 0x02,
  rtcpEncryption: 0x03,
  rtcpAuthentication: 0x04,
  rtcpSalt: 0x05,
} as const

/** The session keys of one direction, for SRTP and SRTCP. */
export interface SrtpSessionKeys {
  readonly rtp: { readonly key: Buffer; readonly salt: Buffer; readonly auth: Buffer }
  readonly rtcp: { readonly key: Buffer; readonly salt: Buffer; readonly auth: Buffer }
}

/**
 * One session key: AES-CM over `(master_salt XOR (label || r)) * 2^16` with r = index DIV kdr = 0, truncated to
 * `length` octets (section 4.3.1; the label sits at octet 7 of the 14-octet salt, the six octets of r after it).
 */
export function deriveSessionKey(masterKey: Uint8Array, masterSalt: Uint8Array, label: number, length: number): Buffer {
  if (masterKey.length !== SRTP_KEY_BYTES || masterSalt.length !== SRTP_SALT_BYTES) throw new RangeError('SRTP master key or salt length')
  const iv = Buffer.alloc(16)
  iv.set(masterSalt, 0)
  iv[7]! ^= label
  return aesCm(masterKey, iv, Buffer.alloc(length))
}

/** Every session key a master key and salt give (section 4.3, kdr 0). */
export function deriveSessionKeys(masterKey: Uint8Array, masterSalt: Uint8Array): SrtpSessionKeys {
  const d = (label: number, length: number) => deriveSessionKey(masterKey, masterSalt, label, length)
  return {
    rtp: {
      key: d(SrtpLabel.rtpEncryption, SRTP_KEY_BYTES),
      salt: d(SrtpLabel.rtpSalt, SRTP_SALT_BYTES),
      auth: d(SrtpLabel.rtpAuthentication, SRTP_AUTH_KEY_BYTES),
    },
    rtcp: {
      key: d(SrtpLabel.rtcpEncryption, SRTP_KEY_BYTES),
      salt: d(SrtpLabel.rtcpSalt, SRTP_SALT_BYTES),
      auth: d(SrtpLabel.rtcpAuthentication, SRTP_AUTH_KEY_BYTES),
    },
  }
}
