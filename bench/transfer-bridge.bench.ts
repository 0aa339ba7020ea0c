import { AudioBridge, type BridgeDirection } from '../gateway/transfer/audio-bridge.js'
import { legFromAsyncSource, type BridgeLeg } from '../gateway/transfer/bridge-leg.js'
import { frameBytes } from '../gateway/transfer/frame-converter.js'
import { encodeMulaw } from '../pipeline/audio/g711-mulaw.js'
import type { AudioFormat } from '../pipeline/audio/audio-format.js'
import { fmt, type BenchOptions, type BenchRow } from './bench-util.js'
import { relayRows } from './transfer-relay.js'

/**
 * The warm transfer bridge's added latency: from a 20 ms frame handed in by one leg to the converted
 * 20 ms frame the other leg is asked to send, p50 and p99 over every frame of every repeat. Two ways in: a callback
 * leg (the bridge's own cost: decode, resample, encode) and a leg fed by an async source (plus the hops of a queue a
 * transport fills). Frames go back to back, each finished before the next, not paced at 20 ms: the figure is the
 * time a frame spends in the gateway, which pacing would not change. Target: p99 under 5 ms on a quiet machine;
 * figures from a shared or busy machine say little.
 */
const CASES: { name: string; caller: [AudioFormat, AudioFormat]; human: [AudioFormat, AudioFormat] }[] = [
  { name: 'phone <-> phone (mu-law <-> mu-law)', caller: ['ulaw_8000', 'ulaw_8000'], human: ['ulaw_8000', 'ulaw_8000'] },
  { name: 'phone <-> PCM16 16 kHz leg', caller: ['ulaw_8000', 'ulaw_8000'], human: ['pcm_16000', 'pcm_16000'] },
  { name: 'phone <-> browser (in PCM16 8 kHz, out 16 kHz)', caller: ['ulaw_8000', 'ulaw_8000'], human: ['pcm_8000', 'pcm_16000'] },
]
const FRAMES_PER_REPEAT = 1500

export async function bench({ repeats }: BenchOptions): Promise<BenchRow[]> {
  const rows: BenchRow[] = []
  for (const c of CASES) {
    for (const mode of ['callback', 'async source'] as const) {
      for (const direction of ['to_human', 'to_caller'] as const) {
        const from = direction === 'to_human' ? c.caller[0] : c.human[0]
        const frames = speechLikeFrames(from, 50)
        const samples: number[] = []
        for (let r = 0; r < repeats; r++) samples.push(...(await measure(c, mode, direction, frames)))
        samples.sort((a, b) => a - b)
        const at = (q: number): number => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]! * 1000
        rows.push({
          case: c.name,
          leg: mode,
          direction,
          frames: samples.length,
          'p50 µs': fmt(at(0.5)),
          'p99 µs': fmt(at(0.99)),
          'max µs': fmt(samples[samples.length - 1]! * 1000),
        })
      }
    }
  }
  // Behind a balancer the human's stream may reach another replica: what the relay between replicas adds.
  rows.push(...(await relayRows(repeats)))
  return rows
}

/** Milliseconds from each frame handed in to its frame out, for one repeat. */
async function measure(
  c: (typeof CASES)[number],
  mode: 'callback' | 'async source',
  direction: BridgeDirection,
  frames: Uint8Array[],
): Promise<number[]> {
  let sentAt = 0
  let done: (() => void) | undefined
  const latencies: number[] = []
  const onSend = (): void => {
    latencies.push(performance.now() - sentAt)
    done?.()
  }
  const fromFormats = direction === 'to_human' ? c.caller : c.human
  const toFormats = direction === 'to_human' ? c.human : c.caller
  let push: (frame: Uint8Array) => void
  let from: BridgeLeg
  if (mode === 'callback') {
    let listener: ((audio: Uint8Array) => void) | undefined
    push = (frame) => listener?.(frame)
    from = {
      inputFormat: fromFormats[0],
      outputFormat: fromFormats[1],
      listen: (l) => {
        listener = l
        return () => undefined
      },
      send: () => undefined,
    }
  } else {
    const queue = frameQueue()
    push = queue.push
    from = legFromAsyncSource({
      inputFormat: fromFormats[0],
      outputFormat: fromFormats[1],
      source: queue.source,
      send: () => undefined,
      onError: (e) => {
        console.error('the frame source failed', e)
        process.exitCode = 1
      },
    })
  }
  const to: BridgeLeg = { inputFormat: toFormats[0], outputFormat: toFormats[1], listen: () => () => undefined, send: onSend }
  const bridge = new AudioBridge(direction === 'to_human' ? { caller: from, human: to } : { caller: to, human: from })
  bridge.start()
  for (let i = 0; i < FRAMES_PER_REPEAT; i++) {
    const out = new Promise<void>((resolve) => {
      done = resolve
    })
    sentAt = performance.now()
    push(frames[i % frames.length]!)
    await out
  }
  bridge.stop()
  // The first frames warm the JIT and prime the resampler: they are not the steady state a call lives in.
  return latencies.slice(50)
}

/** A queue a transport would fill: `push` a frame, the source yields it at the next turn of the microtask queue. */
function frameQueue(): { push: (frame: Uint8Array) => void; source: AsyncIterable<Uint8Array> } {
  const waiting: ((r: IteratorResult<Uint8Array>) => void)[] = []
  const held: Uint8Array[] = []
  return {
    push(frame) {
      const w = waiting.shift()
      if (w === undefined) held.push(frame)
      else w({ value: frame, done: false })
    },
    source: {
      [Symbol.asyncIterator]: () => ({
        next: () => {
          const f = held.shift()
          return f === undefined ? new Promise((resolve) => waiting.push(resolve)) : Promise.resolve({ value: f, done: false })
        },
      }),
    },
  }
}

/** `count` 20 ms frames of two tones with a slow swell (not silence, which some codec paths make cheaper). */
function speechLikeFrames(format: AudioFormat, count: number): Uint8Array[] {
  const rate = format === 'pcm_16000' ? 16000 : 8000
  const n = frameBytes(format) / (format === 'ulaw_8000' ? 1 : 2)
  return Array.from({ length: count }, (_, f) => {
    const s = new Int16Array(n)
    for (let i = 0; i < n; i++) {
      const t = (f * n + i) / rate
      s[i] = Math.round(
        (6000 + 4000 * Math.sin(2 * Math.PI * 3 * t)) * (Math.sin(2 * Math.PI * 220 * t) + 0.5 * Math.sin(2 * Math.PI * 1330 * t)) * 0.6,
      )
    }
    return format === 'ulaw_8000' ? encodeMulaw(s) : new Uint8Array(s.buffer)
  })
}
