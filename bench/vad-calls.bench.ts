import { readFileSync } from 'node:fs'
import { readWav } from '../pipeline/audio/wav.js'
import { VadBatcher } from '../pipeline/vad/vad-batcher.js'
import { VadStream } from '../pipeline/vad/vad-stream.js'
import { sharedSileroModel } from '../pipeline/vad/silero-model.js'
import { cpuMs, fmt, summarize, type BenchOptions, type BenchRow } from './bench-util.js'

const CHUNK = 160 // 20 ms carrier frames at 8 kHz
const FRAMES_PER_CALL_SECOND = 31.25

function speech(): Int16Array {
  return readWav(readFileSync(new URL('../test/fixtures/audio/phrase.wav', import.meta.url))).samples
}

/** Calls pushed in lock-step as fast as the CPU allows: frames per CPU-second -> calls per core. */
async function lockstep(calls: number, maxBatch: number, seconds: number): Promise<{ fps: number; avgBatch: number }> {
  const audio = speech()
  const batcher = new VadBatcher(sharedSileroModel(), { maxBatch, maxWaitMs: 0 })
  const streams = Array.from({ length: calls }, () => new VadStream(() => {}, { batcher }))
  const chunks = Math.floor((seconds * 8000) / CHUNK)
  const c0 = cpuMs()
  const b0 = { ...batcher.stats }
  for (let c = 0; c < chunks; c++) {
    const off = (c * CHUNK) % (audio.length - CHUNK)
    const chunk = audio.subarray(off, off + CHUNK)
    for (const s of streams) s.push(chunk)
    if (c % 2 === 1) await Promise.all(streams.map((s) => s.drain()))
  }
  await Promise.all(streams.map((s) => s.drain()))
  const cpu = cpuMs() - c0
  const frames = batcher.stats.frames - b0.frames
  const batches = batcher.stats.batches - b0.batches
  for (const s of streams) s.close()
  batcher.close()
  return { fps: frames / (cpu / 1000), avgBatch: frames / batches }
}

/** `calls` streams fed in real time (a 20 ms chunk each every 20 ms); reports CPU share and frame latency. */
async function realtime(calls: number, seconds: number): Promise<BenchRow> {
  const audio = speech()
  const batcher = new VadBatcher(sharedSileroModel())
  const latencies: number[] = []
  const pushedAt = new Float64Array(calls)
  const streams = Array.from(
    { length: calls },
    (_, i) =>
      new VadStream(
        (e) => {
          if (e.type === 'frame') latencies.push(performance.now() - pushedAt[i]!)
        },
        { batcher },
      ),
  )
  const ticks = Math.floor((seconds * 1000) / 20)
  const t0 = performance.now()
  const c0 = cpuMs()
  const b0 = { ...batcher.stats }
  // Spread calls over the 20 ms tick in 4 groups, as sockets would deliver them.
  for (let tick = 0; tick < ticks; tick++) {
    for (let g = 0; g < 4; g++) {
      const due = t0 + tick * 20 + g * 5
      const wait = due - performance.now()
      if (wait > 0) await new Promise((r) => setTimeout(r, wait))
      const off = (tick * CHUNK) % (audio.length - CHUNK)
      const chunk = audio.subarray(off, off + CHUNK)
      for (let i = g; i < calls; i += 4) {
        pushedAt[i] = performance.now()
        streams[i]!.push(chunk)
      }
    }
  }
  await Promise.all(streams.map((s) => s.drain()))
  const wall = performance.now() - t0
  const cpu = cpuMs() - c0
  const frames = batcher.stats.frames - b0.frames
  const batches = batcher.stats.batches - b0.batches
  const skipped = streams.reduce((n, s) => n + s.skippedFrames, 0)
  for (const s of streams) s.close()
  batcher.close()
  latencies.sort((a, b) => a - b)
  return {
    mode: 'batched, real time',
    calls,
    'avg batch': fmt(frames / batches),
    'CPU % of one core': fmt((100 * cpu) / wall),
    'calls/core (extrapolated)': fmt(calls / (cpu / wall)),
    'frame latency p50 ms': fmt(latencies[Math.floor(latencies.length / 2)] ?? 0),
    'frame latency p99 ms': fmt(latencies[Math.floor(latencies.length * 0.99)] ?? 0),
    'skipped frames': skipped,
  }
}

/** End-to-end per-call VAD (framing, conversion, batching, frame algorithm) on 8 kHz speech. */
export async function bench({ repeats }: BenchOptions): Promise<BenchRow[]> {
  await sharedSileroModel().load()
  const rows: BenchRow[] = []
  for (const [mode, calls, maxBatch] of [
    ['one at a time', 64, 1],
    ['batched', 64, 64],
    ['batched', 128, 128],
    ['batched', 512, 128],
  ] as [string, number, number][]) {
    const runs: number[] = []
    let avgBatch = 0
    await lockstep(calls, maxBatch, 0.5)
    for (let r = 0; r < repeats; r++) {
      const res = await lockstep(calls, maxBatch, 2)
      runs.push(res.fps)
      avgBatch = res.avgBatch
    }
    const t = summarize(runs)
    rows.push({
      mode,
      calls,
      'avg batch': fmt(avgBatch),
      'frames/CPU-s best': fmt(t.best),
      'frames/CPU-s median': fmt(t.median),
      'calls/core best': fmt(t.best / FRAMES_PER_CALL_SECOND),
      'calls/core median': fmt(t.median / FRAMES_PER_CALL_SECOND),
    })
  }
  rows.push(await realtime(400, 4))
  return rows
}
