import { decodeMulaw, encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import type { AudioFormat } from '../../pipeline/audio/audio-format.js'

const RATE: Record<AudioFormat, number> = { ulaw_8000: 8000, pcm_8000: 8000, pcm_16000: 16000 }

/** `ms` of a sine at `hz` and `amplitude` in `format`, from sample `offset` on (so successive calls join). */
export function tone(format: AudioFormat, hz: number, ms: number, amplitude = 8000, offset = 0): Uint8Array {
  const rate = RATE[format]
  const samples = new Int16Array((rate * ms) / 1000)
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * (i + offset)) / rate))
  return encode(format, samples)
}

/** 20 ms frames of a continuous tone. */
export function toneFrames(format: AudioFormat, hz: number, count: number, amplitude = 8000): Uint8Array[] {
  const perFrame = RATE[format] / 50
  return Array.from({ length: count }, (_, i) => tone(format, hz, 20, amplitude, i * perFrame))
}

export function encode(format: AudioFormat, samples: Int16Array): Uint8Array {
  if (format === 'ulaw_8000') return encodeMulaw(samples)
  return new Uint8Array(samples.buffer.slice(samples.byteOffset, samples.byteOffset + samples.byteLength))
}

export function decode(format: AudioFormat, bytes: Uint8Array): Int16Array {
  if (format === 'ulaw_8000') return decodeMulaw(bytes)
  return new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
}

/** Frequency from zero crossings and RMS of `samples` at `rate`. */
export function measure(samples: Int16Array, rate: number): { hz: number; rms: number } {
  let crossings = 0
  let sum = 0
  for (let i = 0; i < samples.length; i++) {
    sum += samples[i]! * samples[i]!
    if (i > 0 && samples[i - 1]! < 0 !== samples[i]! < 0) crossings++
  }
  return { hz: (crossings / 2) * (rate / samples.length), rms: Math.sqrt(sum / samples.length) }
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}
