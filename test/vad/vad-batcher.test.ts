import t from 'tap'
import { int16ToFloat32 } from '../../pipeline/audio/pcm16.js'
import { SILERO_STATE_SIZE, SileroModel, sharedSileroModel } from '../../pipeline/vad/silero-model.js'
import { VadBatcher } from '../../pipeline/vad/vad-batcher.js'
import { VadStream } from '../../pipeline/vad/vad-stream.js'
import { loadFixture } from '../fixtures/audio/signals.js'

const WIDTH = 256 + 32

/** Model inputs (context + frame) for every frame of `samples` at 8 kHz, offset by `shift` frames. */
function inputs(samples: Int16Array, shift: number, count: number): Float32Array[] {
  const x = int16ToFloat32(samples)
  const out: Float32Array[] = []
  for (let k = 0; k < count; k++) {
    const start = ((k + shift) * 256) % (x.length - 256)
    const row = new Float32Array(WIDTH)
    if (start >= 32) row.set(x.subarray(start - 32, start), 0)
    row.set(x.subarray(start, start + 256), 32)
    out.push(row)
  }
  return out
}

t.test('batched results equal unbatched results within 1e-4', async (t) => {
  const { samples } = loadFixture('two-phrases.wav')
  const streams = 12
  const frames = 40
  const model = sharedSileroModel()
  // Unbatched: each stream alone, N = 1, state carried frame to frame.
  const expected: number[][] = []
  for (let s = 0; s < streams; s++) {
    let state: Float32Array = new Float32Array(SILERO_STATE_SIZE)
    const probs: number[] = []
    for (const row of inputs(samples, s * 7, frames)) {
      const r = await model.infer(8000, 1, row, state)
      state = r.state.slice()
      probs.push(r.probs[0]!)
    }
    expected.push(probs)
  }
  // Batched: all streams submit their k-th frame together.
  const batcher = new VadBatcher(model, { maxBatch: 64, maxWaitMs: 1 })
  const states = Array.from({ length: streams }, () => new Float32Array(SILERO_STATE_SIZE))
  const rows = Array.from({ length: streams }, (_, s) => inputs(samples, s * 7, frames))
  const got: number[][] = Array.from({ length: streams }, () => [])
  for (let k = 0; k < frames; k++) {
    const ps = await Promise.all(rows.map((r, s) => batcher.infer(8000, r[k]!, states[s]!)))
    ps.forEach((p, s) => {
      got[s]!.push(p)
    })
  }
  t.equal(batcher.stats.maxBatchSeen, streams, 'all streams ran in one model call')
  t.equal(batcher.stats.batches, frames)
  let maxDiff = 0
  for (let s = 0; s < streams; s++) for (let k = 0; k < frames; k++) maxDiff = Math.max(maxDiff, Math.abs(got[s]![k]! - expected[s]![k]!))
  t.ok(maxDiff <= 1e-4, `max |batched - unbatched| = ${maxDiff.toExponential(2)}`)
  t.ok(
    expected.flat().some((p) => p > 0.5),
    'the frames include speech',
  )
  batcher.close()
})

t.test('many VadStreams share batches and get the same probabilities as one stream alone', async (t) => {
  const { samples } = loadFixture('phrase.wav')
  const alone: number[] = []
  const solo = new VadStream((e) => e.type === 'frame' && alone.push(e.probability), {
    maxQueuedFrames: Infinity,
    batcher: new VadBatcher(sharedSileroModel(), { maxBatch: 1 }),
  })
  solo.push(samples)
  await solo.end()
  const batcher = new VadBatcher(sharedSileroModel(), { maxBatch: 32 })
  const results: number[][] = Array.from({ length: 16 }, () => [])
  const streams = results.map(
    (r) => new VadStream((e) => e.type === 'frame' && r.push(e.probability), { batcher, maxQueuedFrames: Infinity }),
  )
  for (let off = 0; off < samples.length; off += 160) for (const s of streams) s.push(samples.subarray(off, off + 160))
  await Promise.all(streams.map((s) => s.end()))
  t.ok(batcher.stats.maxBatchSeen >= 16, `batch size reached ${batcher.stats.maxBatchSeen}`)
  for (const r of results) {
    t.equal(r.length, alone.length)
    t.ok(r.every((p, i) => Math.abs(p - alone[i]!) <= 1e-4))
  }
  batcher.close()
})

t.test('frames that come while a model call runs wait for company, as long as the first frame of a batch would', async (t) => {
  const batcher = new VadBatcher(sharedSileroModel(), { maxBatch: 8, maxWaitMs: 150 })
  t.teardown(() => batcher.close())
  const sizes: number[] = []
  batcher.observe({ batch: (n) => sizes.push(n), skipped: () => {} })
  const row = new Float32Array(WIDTH)
  const job = () => batcher.infer(8000, row, new Float32Array(SILERO_STATE_SIZE))
  await job() // loads the model; one call of one frame
  let late: Promise<number[]> | undefined
  const first = new Promise<number>((resolve, reject) => {
    batcher.submit({
      sampleRate: 8000,
      input: row,
      state: new Float32Array(SILERO_STATE_SIZE),
      done: (err, p) => {
        if (err !== undefined) return reject(err)
        // Arrives while the call that ran this frame is still in flight: it must not run alone at once.
        const during = job()
        late = new Promise((r) => setTimeout(r, 10)).then(() => Promise.all([during, job(), job(), job()]))
        resolve(p)
      },
    })
  })
  await first
  t.ok(late !== undefined, 'the frame came during the call')
  await late
  t.same(sizes, [1, 1, 4], 'the frame that came during the call and the three 10 ms later ran as one call of four')
  // Eight frames make a full call at once; the other four wait for company as any would.
  const twelve = Array.from({ length: 12 }, () => job())
  await Promise.all(twelve)
  t.same(sizes.slice(3), [8, 4], 'twelve frames: a call of eight, then one of four')
})

t.test('a frame with frames of its stream behind it runs without waiting for company', async (t) => {
  // A wait for company far longer than the test: a frame that is not behind would still be waiting at its end.
  const batcher = new VadBatcher(sharedSileroModel(), { maxBatch: 8, maxWaitMs: 60_000 })
  t.teardown(() => batcher.close())
  const row = new Float32Array(WIDTH)
  const submit = (behind: boolean) =>
    new Promise<number>((resolve, reject) => {
      batcher.submit({
        sampleRate: 8000,
        input: row,
        state: new Float32Array(SILERO_STATE_SIZE),
        behind,
        done: (e, p) => (e ? reject(e) : resolve(p)),
      })
    })
  const waiting = submit(false)
  let ranAlone = false
  void waiting.then(() => {
    ranAlone = true
  })
  await new Promise((r) => setTimeout(r, 50))
  t.notOk(ranAlone, 'a frame on time waits for company')
  // The late frame joins it: both run at once, in one call.
  const sizes: number[] = []
  batcher.observe({ batch: (n) => sizes.push(n), skipped: () => {} })
  await Promise.all([waiting, submit(true)])
  t.same(sizes, [2], 'the waiting frame and the late one ran as one call')
  // A late frame that comes while a call runs: the call after it does not wait either.
  const during = new Promise<number>((resolve, reject) => {
    batcher.submit({
      sampleRate: 8000,
      input: row,
      state: new Float32Array(SILERO_STATE_SIZE),
      behind: true,
      done: (e) => (e ? reject(e) : resolve(submit(true))),
    })
  })
  await during
  t.same(sizes, [2, 1, 1], 'a late frame submitted during a call ran right after it')
})

t.test('a model failure reaches every stream as an error event', async (t) => {
  const broken = new SileroModel({ modelPath: '/nonexistent/model.onnx' })
  const batcher = new VadBatcher(broken)
  const errors: string[] = []
  const s = new VadStream((e) => e.type === 'error' && errors.push((e.error as Error & { code?: string }).code ?? ''), { batcher })
  s.push(new Int16Array(512))
  await t.rejects(s.drain(), { code: 'vad_model_failed' })
  t.same(errors, ['vad_model_failed'])
  batcher.close()
  batcher.close()
  await broken.close()
})
