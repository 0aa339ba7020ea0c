import alawmulaw from 'alawmulaw'
import { decodeAlaw, encodeAlaw } from '../pipeline/audio/g711-alaw.js'
import { decodeMulaw, encodeMulaw } from '../pipeline/audio/g711-mulaw.js'
import { base64ToInt16, float32ToInt16, int16ToBase64, int16ToFloat32 } from '../pipeline/audio/pcm16.js'
import { fmt, throughput, type BenchOptions, type BenchRow } from './bench-util.js'

/** Codec throughput on 20 ms carrier chunks (160 samples) and on 1 s blocks, in Msamples/s. */
export async function bench({ repeats }: BenchOptions): Promise<BenchRow[]> {
  const rows: BenchRow[] = []
  const sec = new Int16Array(8000)
  for (let i = 0; i < sec.length; i++) sec[i] = Math.round(12000 * Math.sin(i * 0.07) + 3000 * Math.sin(i * 1.3))
  const muBytes = encodeMulaw(sec)
  const aBytes = encodeAlaw(sec)
  const outBytes = new Uint8Array(sec.length)
  const outPcm = new Int16Array(sec.length)
  const f32 = int16ToFloat32(sec)
  const b64 = int16ToBase64(sec)
  const cases: [string, string, () => unknown][] = [
    ['mu-law encode', 'table (pipeline)', () => encodeMulaw(sec, outBytes)],
    ['mu-law encode', 'alawmulaw', () => alawmulaw.mulaw.encode(sec)],
    ['mu-law decode', 'table (pipeline)', () => decodeMulaw(muBytes, outPcm)],
    ['mu-law decode', 'alawmulaw', () => alawmulaw.mulaw.decode(muBytes)],
    ['a-law encode', 'table (pipeline)', () => encodeAlaw(sec, outBytes)],
    ['a-law encode', 'alawmulaw', () => alawmulaw.alaw.encode(sec)],
    ['a-law decode', 'table (pipeline)', () => decodeAlaw(aBytes, outPcm)],
    ['a-law decode', 'alawmulaw', () => alawmulaw.alaw.decode(aBytes)],
    ['pcm16 -> float32', 'pipeline', () => int16ToFloat32(sec, f32)],
    ['float32 -> pcm16', 'pipeline', () => float32ToInt16(f32, outPcm)],
    ['pcm16 -> base64', 'pipeline', () => int16ToBase64(sec)],
    ['base64 -> pcm16', 'pipeline', () => base64ToInt16(b64)],
  ]
  for (const [name, impl, body] of cases) {
    const t = await throughput(sec.length, body, { repeats, minMs: 200 })
    rows.push({
      case: name,
      impl,
      'Msamples/s best': fmt(t.best / 1e6),
      'Msamples/s median': fmt(t.median / 1e6),
      'x real time (8 kHz, median)': fmt(t.median / 8000),
    })
  }
  // Per carrier frame: the shape of the hot path (one 20 ms media message at a time).
  const frame = sec.subarray(0, 160)
  const fb = new Uint8Array(160)
  const fp = new Int16Array(160)
  for (const [name, impl, body] of [
    ['mu-law encode 160', 'table (pipeline)', () => encodeMulaw(frame, fb)],
    ['mu-law encode 160', 'alawmulaw', () => alawmulaw.mulaw.encode(frame)],
    ['mu-law decode 160', 'table (pipeline)', () => decodeMulaw(fb, fp)],
    ['mu-law decode 160', 'alawmulaw', () => alawmulaw.mulaw.decode(fb)],
  ] as [string, string, () => unknown][]) {
    const t = await throughput(
      160,
      () => {
        for (let i = 0; i < 50; i++) body()
      },
      { repeats, minMs: 200 },
    )
    rows.push({
      case: name,
      impl,
      'Msamples/s best': fmt((t.best * 50) / 1e6),
      'Msamples/s median': fmt((t.median * 50) / 1e6),
      'x real time (8 kHz, median)': fmt((t.median * 50) / 8000),
    })
  }
  return rows
}
