import { Resampler } from '../pipeline/audio/resampler.js'
import { fmt, throughput, type BenchOptions, type BenchRow } from './bench-util.js'

const PAIRS: [number, number][] = [
  [8000, 16000],
  [16000, 8000],
  [8000, 22050],
  [22050, 8000],
  [8000, 24000],
  [24000, 8000],
  [22050, 16000],
  [24000, 16000],
  [16000, 24000],
]

/** Streaming resampler speed in 20 ms chunks, PCM16 in and out: x real time on one core. */
export async function bench({ repeats }: BenchOptions): Promise<BenchRow[]> {
  const rows: BenchRow[] = []
  for (const [from, to] of PAIRS) {
    const seconds = 2
    const input = new Int16Array(from * seconds)
    for (let i = 0; i < input.length; i++) input[i] = Math.round(10000 * Math.sin((i * 2 * Math.PI * 440) / from))
    const chunk = Math.round(from / 50)
    const r = new Resampler({ from, to })
    const t = await throughput(
      seconds,
      () => {
        for (let o = 0; o < input.length; o += chunk) r.processInt16(input.subarray(o, o + chunk))
      },
      { repeats, minMs: 200 },
    )
    rows.push({
      from,
      to,
      taps: r.latencySamples * 2,
      'x real time best': fmt(t.best),
      'x real time median': fmt(t.median),
      'core % per call (median)': fmt(100 / t.median),
    })
  }
  return rows
}
