import alawmulaw from 'alawmulaw'
import { g711Tables } from './g711-tables.js'

const tables = g711Tables(alawmulaw.mulaw)

/** Encode PCM16 to G.711 mu-law (PCMU) bytes. Writes into `out` when given (must be at least as long). Pure. */
export function encodeMulaw(samples: Int16Array, out: Uint8Array = new Uint8Array(samples.length)): Uint8Array {
  const enc = tables.encode()
  for (let i = 0; i < samples.length; i++) out[i] = enc[samples[i]! & 0xffff]!
  return out.length === samples.length ? out : out.subarray(0, samples.length)
}

/** Decode G.711 mu-law (PCMU) bytes to PCM16. Writes into `out` when given (must be at least as long). Pure. */
export function decodeMulaw(bytes: Uint8Array, out: Int16Array = new Int16Array(bytes.length)): Int16Array {
  const dec = tables.decode()
  for (let i = 0; i < bytes.length; i++) out[i] = dec[bytes[i]!]!
  return out.length === bytes.length ? out : out.subarray(0, bytes.length)
}
