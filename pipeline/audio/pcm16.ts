import { endianness } from 'node:os'

const LITTLE_ENDIAN_HOST = endianness() === 'LE'

/** Full-scale divisor used for PCM16 <-> float conversion (matches Web Audio / Silero conventions). */
export const PCM16_SCALE = 32768

/**
 * View (or copy) PCM16 samples as little-endian bytes.
 * On little-endian hosts this shares memory with `samples`; do not mutate one while using the other.
 */
export function int16ToBuffer(samples: Int16Array): Buffer {
  if (LITTLE_ENDIAN_HOST) return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength)
  const out = Buffer.allocUnsafe(samples.byteLength)
  for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i]!, i * 2)
  return out
}

/**
 * Interpret little-endian PCM16 bytes as samples. Shares memory with `bytes` when it is 2-byte aligned on a
 * little-endian host, copies otherwise. Throws on an odd byte length.
 */
export function bufferToInt16(bytes: Uint8Array): Int16Array {
  if (bytes.byteLength % 2 !== 0) throw new RangeError(`PCM16 byte length must be even, got ${bytes.byteLength}`)
  const n = bytes.byteLength / 2
  if (LITTLE_ENDIAN_HOST) {
    if (bytes.byteOffset % 2 === 0) return new Int16Array(bytes.buffer, bytes.byteOffset, n)
    const out = new Int16Array(n)
    new Uint8Array(out.buffer).set(bytes)
    return out
  }
  const out = new Int16Array(n)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (let i = 0; i < n; i++) out[i] = view.getInt16(i * 2, true)
  return out
}

/** Convert PCM16 to float in [-1, 1). Writes into `out` when given (must be at least as long). */
export function int16ToFloat32(src: Int16Array, out: Float32Array = new Float32Array(src.length)): Float32Array {
  const inv = 1 / PCM16_SCALE
  for (let i = 0; i < src.length; i++) out[i] = src[i]! * inv
  return out.length === src.length ? out : out.subarray(0, src.length)
}

/** Convert float samples to PCM16 with rounding and clipping. Writes into `out` when given. */
export function float32ToInt16(src: Float32Array, out: Int16Array = new Int16Array(src.length)): Int16Array {
  for (let i = 0; i < src.length; i++) {
    const v = Math.round(src[i]! * PCM16_SCALE)
    out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v
  }
  return out.length === src.length ? out : out.subarray(0, src.length)
}

/** Encode PCM16 samples as base64 of little-endian bytes (the wire format of `client.audio`). */
export function int16ToBase64(samples: Int16Array): string {
  return int16ToBuffer(samples).toString('base64')
}

/** Decode base64 little-endian PCM16 into samples. Throws on an odd byte count. */
export function base64ToInt16(b64: string): Int16Array {
  return bufferToInt16(Buffer.from(b64, 'base64'))
}

/** Interleave per-channel PCM16 arrays (all the same length) into one frame-ordered array. */
export function interleave(channels: readonly Int16Array[]): Int16Array {
  const nch = channels.length
  if (nch === 0) return new Int16Array(0)
  const n = channels[0]!.length
  const out = new Int16Array(n * nch)
  for (let c = 0; c < nch; c++) {
    const ch = channels[c]!
    if (ch.length !== n) throw new RangeError('interleave: channel lengths differ')
    for (let i = 0; i < n; i++) out[i * nch + c] = ch[i]!
  }
  return out
}

/** Split frame-ordered PCM16 into one array per channel. */
export function deinterleave(samples: Int16Array, channels: number): Int16Array[] {
  if (!Number.isInteger(channels) || channels < 1) throw new RangeError(`bad channel count ${channels}`)
  const n = Math.floor(samples.length / channels)
  const out: Int16Array[] = []
  for (let c = 0; c < channels; c++) {
    const ch = new Int16Array(n)
    for (let i = 0; i < n; i++) ch[i] = samples[i * channels + c]!
    out.push(ch)
  }
  return out
}
