import {
  SILERO_STATE_SIZE,
  SileroModel,
  sileroContextSamples,
  sileroFrameSamples,
  type SileroSampleRate,
} from '../pipeline/vad/silero-model.js'
import { fmt, throughput, type BenchOptions, type BenchRow } from './bench-util.js'

const FRAMES_PER_CALL_SECOND = 31.25

/**
 * Raw Silero v5 inference: frames per CPU-second for batch sizes 1..128 at the model's 8 kHz and 16 kHz modes, for
 * the file as shipped and with its convolutions folded over the batch (what the gateway runs, conv-as-matmul.ts).
 */
export async function bench({ repeats }: BenchOptions): Promise<BenchRow[]> {
  const rows: BenchRow[] = []
  for (const foldBatch of [false, true]) rows.push(...(await benchGraph(foldBatch, repeats)))
  return rows
}

async function benchGraph(foldBatch: boolean, repeats: number): Promise<BenchRow[]> {
  const model = new SileroModel({ foldBatch })
  await model.load()
  const rows: BenchRow[] = []
  for (const rate of [8000, 16000] as SileroSampleRate[]) {
    const width = sileroFrameSamples(rate) + sileroContextSamples(rate)
    for (const n of [1, 8, 32, 64, 128]) {
      const input = new Float32Array(n * width)
      for (let i = 0; i < input.length; i++) input[i] = 0.1 * Math.sin(i * 0.05) + 0.01 * Math.sin(i * 1.7)
      let state: Float32Array = new Float32Array(n * SILERO_STATE_SIZE)
      const t = await throughput(
        n,
        async () => {
          state = (await model.infer(rate, n, input, state)).state
        },
        { repeats, minMs: 300 },
      )
      rows.push({
        graph: foldBatch ? `convs as MatMul (${model.foldedConvs})` : 'as shipped',
        'model rate': rate,
        batch: n,
        'us/frame (best)': fmt(1e6 / t.best),
        'frames/s best': fmt(t.best),
        'frames/s median': fmt(t.median),
        'calls/core (median)': fmt(t.median / FRAMES_PER_CALL_SECOND),
      })
    }
  }
  await model.close()
  return rows
}
