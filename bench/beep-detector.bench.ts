import { BeepDetector } from '../pipeline/tones/beep-detector.js'
import { decodeMulaw, encodeMulaw } from '../pipeline/audio/g711-mulaw.js'
import { loadFixture } from '../test/fixtures/audio/signals.js'
import { fmt, throughput, type BenchOptions, type BenchRow } from './bench-util.js'

/**
 * The answering-machine beep detector's cost per 20 ms carrier frame (it runs on every caller frame of an outbound
 * call with machine detection until a verdict): mu-law decode plus detection, on speech and on a steady tone.
 */
export async function bench({ repeats }: BenchOptions): Promise<BenchRow[]> {
  const speech = loadFixture('phrase.wav').samples
  const tone = new Int16Array(8000).map((_, i) => Math.round(7000 * Math.sin((2 * Math.PI * 1000 * i) / 8000)))
  const rows: BenchRow[] = []
  for (const [name, pcm] of [
    ['speech (phrase.wav)', speech],
    ['1 kHz tone', tone],
  ] as const) {
    const frames: Uint8Array[] = []
    for (let at = 0; at + 160 <= pcm.length; at += 160) {
      const mu = new Uint8Array(160)
      encodeMulaw(pcm.subarray(at, at + 160), mu)
      frames.push(mu)
    }
    const out = new Int16Array(160)
    let d = new BeepDetector()
    let i = 0
    const t = await throughput(
      1,
      () => {
        const frame = frames[i++ % frames.length] as Uint8Array
        if (i % frames.length === 0) d = new BeepDetector()
        d.push(decodeMulaw(frame, out))
      },
      { repeats, minMs: 200 },
    )
    rows.push({
      case: `beep detector, ${name}`,
      'frames/s (median)': fmt(t.median),
      'µs per 20 ms frame': fmt(1e6 / t.median),
      'share of one core per call': `${fmt((50 / t.median) * 100)}%`,
    })
  }
  return rows
}
