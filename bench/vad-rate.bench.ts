// Decides how 8 kHz callers are run through Silero v5: the model's native 8 kHz mode, or upsampling to 16 kHz.
// Ground truth comes from espeak-ng speech (optional dependency; this module is skipped without it).
import { decodeMulaw, encodeMulaw } from '../pipeline/audio/g711-mulaw.js'
import { int16ToFloat32 } from '../pipeline/audio/pcm16.js'
import { Resampler, resample } from '../pipeline/audio/resampler.js'
import {
  SILERO_STATE_SIZE,
  SileroModel,
  sileroContextSamples,
  sileroFrameSamples,
  type SileroSampleRate,
} from '../pipeline/vad/silero-model.js'
import { ESPEAK_SAMPLE_RATE, synthesize, trimSilence } from '../test/fixtures/audio/espeak.js'
import { fmt, throughput, type BenchOptions, type BenchRow } from './bench-util.js'

const PHRASES = [
  'Hello I would like to check the status of my order',
  'Can you transfer me to the billing department please',
  'My account number is four five seven two nine one',
  'Yes',
  'No thanks that is all for today',
  'I have been waiting on hold for twenty minutes',
  'What time does the store open on Sunday',
  'Okay',
  'Please cancel my subscription starting next month',
  'Sorry could you repeat that',
]
const FRAME_MS = 32

interface Corpus {
  audio: Int16Array // 22,050 Hz
  truth: boolean[] // per 32 ms frame
}

async function corpus(): Promise<Corpus> {
  const parts: Int16Array[] = []
  const spans: [number, number][] = []
  let at = 0
  const gap = (ms: number): void => {
    const n = Math.round((ms * ESPEAK_SAMPLE_RATE) / 1000)
    parts.push(new Int16Array(n))
    at += n
  }
  gap(700)
  for (let i = 0; i < PHRASES.length; i++) {
    const pcm = trimSilence(await synthesize(PHRASES[i]!, { rate: 140 + ((i * 37) % 90), pitch: 30 + ((i * 23) % 50) }), ESPEAK_SAMPLE_RATE)
    spans.push([at, at + pcm.length])
    parts.push(pcm)
    at += pcm.length
    gap(500 + ((i * 211) % 700))
  }
  const audio = new Int16Array(at)
  let off = 0
  for (const p of parts) {
    audio.set(p, off)
    off += p.length
  }
  let seed = 7
  for (let i = 0; i < audio.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0
    audio[i] = Math.max(-32768, Math.min(32767, audio[i]! + ((seed >>> 16) % 61) - 30))
  }
  const frameLen = (ESPEAK_SAMPLE_RATE * FRAME_MS) / 1000
  const frames = Math.floor(at / frameLen)
  const truth: boolean[] = []
  for (let f = 0; f < frames; f++) {
    const a = f * frameLen
    const b = a + frameLen
    const overlap = spans.reduce((n, [s, e]) => n + Math.max(0, Math.min(b, e) - Math.max(a, s)), 0)
    truth.push(overlap > frameLen / 2)
  }
  return { audio, truth }
}

async function probabilities(model: SileroModel, pcm: Int16Array, rate: SileroSampleRate): Promise<number[]> {
  const x = int16ToFloat32(pcm)
  const fs = sileroFrameSamples(rate)
  const ctx = sileroContextSamples(rate)
  const input = new Float32Array(fs + ctx)
  let state: Float32Array = new Float32Array(SILERO_STATE_SIZE)
  const out: number[] = []
  for (let o = 0; o + fs <= x.length; o += fs) {
    input.copyWithin(0, fs, fs + ctx)
    input.set(x.subarray(o, o + fs), ctx)
    const r = await model.infer(rate, 1, input, state)
    state = r.state
    out.push(r.probs[0]!)
  }
  return out
}

function auc(p: number[], truth: boolean[]): number {
  const idx = p.map((_, i) => i).sort((a, b) => p[a]! - p[b]!)
  let rankSum = 0
  let pos = 0
  idx.forEach((i, r) => {
    if (truth[i]) {
      rankSum += r + 1
      pos++
    }
  })
  const neg = p.length - pos
  return (rankSum - (pos * (pos + 1)) / 2) / (pos * neg)
}

function accuracy(p: number[], truth: boolean[], thr: number): number {
  let ok = 0
  for (let i = 0; i < p.length; i++) if (p[i]! >= thr === truth[i]) ok++
  return ok / p.length
}

/** 8 kHz native mode vs upsampling to 16 kHz: frame accuracy against ground truth, and CPU cost per frame. */
export async function bench({ repeats }: BenchOptions): Promise<BenchRow[]> {
  let c: Corpus
  try {
    c = await corpus()
  } catch (err) {
    return [{ skipped: `espeak-ng unavailable: ${(err as Error).message}` }]
  }
  const model = new SileroModel()
  await model.load()
  const pcm8k = decodeMulaw(encodeMulaw(resample(c.audio, ESPEAK_SAMPLE_RATE, 8000)))
  const variants: [string, Int16Array, SileroSampleRate][] = [
    ['reference: wideband 22.05k -> 16k, 16 kHz model', resample(c.audio, ESPEAK_SAMPLE_RATE, 16000), 16000],
    ['8k mu-law, native 8 kHz model', pcm8k, 8000],
    ['8k mu-law -> 16k resampled, 16 kHz model', resample(pcm8k, 8000, 16000), 16000],
  ]
  const ref = await probabilities(model, variants[0]![1], 16000)
  const rows: BenchRow[] = []
  for (const [name, pcm, rate] of variants) {
    const p = await probabilities(model, pcm, rate)
    const n = Math.min(p.length, c.truth.length)
    const pp = p.slice(0, n)
    const tt = c.truth.slice(0, n)
    const mad = pp.reduce((s, v, i) => s + Math.abs(v - ref[i]!), 0) / n
    const width = sileroFrameSamples(rate) + sileroContextSamples(rate)
    const input = new Float32Array(64 * width).map((_, i) => 0.05 * Math.sin(i * 0.03))
    let state: Float32Array = new Float32Array(64 * SILERO_STATE_SIZE)
    const single = await throughput(
      1,
      async () => {
        await model.infer(rate, 1, input.subarray(0, width), state.subarray(0, SILERO_STATE_SIZE))
      },
      { repeats, minMs: 200 },
    )
    const batched = await throughput(
      64,
      async () => {
        state = (await model.infer(rate, 64, input, state)).state
      },
      { repeats, minMs: 200 },
    )
    let resampleUs = 0
    if (name.includes('resampled')) {
      const r = new Resampler({ from: 8000, to: 16000 })
      const chunk = pcm8k.subarray(0, 160)
      const t = await throughput(160, () => r.processInt16(chunk), { repeats, minMs: 200 })
      resampleUs = (1e6 / t.median) * 256
    }
    rows.push({
      variant: name,
      frames: n,
      'ROC AUC': fmt(auc(pp, tt)),
      'acc @0.5': fmt(accuracy(pp, tt, 0.5)),
      'acc @0.3': fmt(accuracy(pp, tt, 0.3)),
      'mean |p - ref|': fmt(mad),
      'model us/frame N=1': fmt(1e6 / single.median),
      'model us/frame N=64': fmt(1e6 / batched.median),
      'resample us/frame': fmt(resampleUs),
    })
  }
  await model.close()
  return rows
}
