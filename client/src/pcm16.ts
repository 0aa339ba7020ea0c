/** PCM16 little-endian <-> base64 and float helpers (pure, no DOM). */

/** Float samples in [-1, 1] to PCM16 (clamped). */
export function floatToInt16(input: Float32Array): Int16Array {
  const out = new Int16Array(input.length)
  for (let i = 0; i < input.length; i++) {
    const v = Math.max(-1, Math.min(1, input[i]!))
    out[i] = v < 0 ? Math.round(v * 32768) : Math.round(v * 32767)
  }
  return out
}

/** PCM16 samples to base64 of their little-endian bytes. */
export function int16ToBase64(samples: Int16Array): string {
  const bytes = new Uint8Array(samples.length * 2)
  const view = new DataView(bytes.buffer)
  for (let i = 0; i < samples.length; i++) view.setInt16(i * 2, samples[i]!, true)
  let binary = ''
  const step = 0x8000
  for (let i = 0; i < bytes.length; i += step) binary += String.fromCharCode(...bytes.subarray(i, i + step))
  return btoa(binary)
}

/** Base64 of little-endian PCM16 to float samples in [-1, 1). A trailing odd byte is ignored. */
export function base64ToFloat(content: string): Float32Array<ArrayBuffer> {
  const binary = atob(content)
  const n = binary.length >> 1
  const out = new Float32Array(n)
  for (let i = 0; i < n; i++) {
    const lo = binary.charCodeAt(2 * i)
    const hi = binary.charCodeAt(2 * i + 1)
    const v = (hi << 8) | lo
    out[i] = (v >= 0x8000 ? v - 0x10000 : v) / 32768
  }
  return out
}

/** Root mean square of float samples (0 for none). */
export function rms(samples: Float32Array): number {
  if (samples.length === 0) return 0
  let sum = 0
  for (let i = 0; i < samples.length; i++) sum += samples[i]! * samples[i]!
  return Math.sqrt(sum / samples.length)
}
