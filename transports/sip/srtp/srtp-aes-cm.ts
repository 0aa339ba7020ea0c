/**
 * AES in counter mode as SRTP uses it (RFC 3711 section 4.1.1): the 128-bit IV is the session salt shifted by 16
 * bits, XORed with the SSRC at bits 64-95 and the packet index at bits 16-63; the block counter runs in the low 16
 * bits (a packet never needs more than 2^16 blocks, so OpenSSL's 128-bit increment never carries further).
 */
import { createCipheriv, type KeyObject } from 'node:crypto'

/** Writes the IV for `ssrc` and the 48-bit `index` (SRTP's packet index, or SRTCP's 31-bit one) into `iv`. */
export function writeSrtpIv(iv: Buffer, salt: Uint8Array, ssrc: number, index: number): Buffer {
  iv.set(salt, 0)
  iv[14] = 0
  iv[15] = 0
  iv.writeUInt32BE((iv.readUInt32BE(4) ^ ssrc) >>> 0, 4)
  // The index in octets 8 to 13: its high 16 bits, then its low 32.
  iv.writeUInt16BE(iv.readUInt16BE(8) ^ Math.floor(index / 0x100000000), 8)
  iv.writeUInt32BE((iv.readUInt32BE(10) ^ (index % 0x100000000)) >>> 0, 10)
  return iv
}

/** `input` XORed with the AES-128-CM keystream that starts at `iv` (encryption and decryption alike). */
export function aesCm(key: KeyObject | Uint8Array, iv: Uint8Array, input: Uint8Array): Buffer {
  return createCipheriv('aes-128-ctr', key, iv).update(input)
}
