// Self-hosted speech latency through the adapters, against the local speech fake answering after a set delay:
// end of speech (finalize) to the final transcript for `stt.openai_compatible` segments, and text to the first audio
// byte for `tts.openai_compatible`. "Overhead" is what the gateway adds on top of the server's own time (the set
// delay): WAV building, resampling to 16 kHz, the multipart body, loopback HTTP both ways, parsing, the event queue.
// For recognition the fake's own time (reading the form and the WAV, then the delay) is measured and taken out;
// the fake still shares this process's event loop, so the figures are an upper bound.
import { encodeMulaw } from '../pipeline/audio/g711-mulaw.js'
import { sttOpenAiCompatibleOptionsSchema, ttsOpenAiCompatibleOptionsSchema } from '../pipeline/options/openai-compatible-options.js'
import type { SttEvent } from '../pipeline/vendors/stt/stt-stream.js'
import type { TtsEvent } from '../pipeline/vendors/tts/tts-stream.js'
import { createSttStream, createTtsStream } from '../pipeline/vendors/open-vendor.js'
import { startFakeOpenAiSpeech } from '../test/fakes/openai-speech/fake-openai-speech.js'
import { fmt, type BenchOptions, type BenchRow } from './bench-util.js'

/** `ms` of a 300 Hz tone in mu-law, what a phone sends. */
function phone(ms: number): Buffer {
  const n = (ms * 8000) / 1000
  const pcm = new Int16Array(n)
  for (let i = 0; i < n; i++) pcm[i] = Math.round(9000 * Math.sin((2 * Math.PI * 300 * i) / 8000))
  return Buffer.from(encodeMulaw(pcm))
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
}

/** The next event of `it` matching `pred`. */
async function next<E>(it: AsyncIterator<E>, pred: (e: E) => boolean): Promise<E> {
  for (;;) {
    const r = await it.next()
    if (r.done) throw new Error('the stream ended')
    if (pred(r.value)) return r.value
  }
}

/** `serverMs`: the fake's own time per turn (reading the form and the WAV, the set delay); else the delay alone. */
function row(name: string, delayMs: number, totals: number[], serverMs?: number[]): BenchRow {
  const over = totals.map((v, i) => v - (serverMs?.[i] ?? delayMs))
  return {
    case: name,
    turns: totals.length,
    'server delay ms': delayMs,
    'p50 ms': fmt(percentile(totals, 50)),
    'p99 ms': fmt(percentile(totals, 99)),
    'overhead p50 ms': fmt(percentile(over, 50)),
    'overhead p99 ms': fmt(percentile(over, 99)),
  }
}

export async function bench({ repeats }: BenchOptions): Promise<BenchRow[]> {
  const turns = Math.max(20, repeats * 20)
  const rows: BenchRow[] = []
  const fake = await startFakeOpenAiSpeech({ msPerChar: 20, chunkMs: 20, chunkIntervalMs: 0 })
  try {
    for (const [segmentMs, delayMs, words] of [
      [1000, 0, true],
      [2000, 100, true],
      [2000, 100, false],
      [8000, 100, true],
    ] as const) {
      fake.transcribe = () => ({ text: 'what are your opening hours on sundays', delayMs })
      const stream = createSttStream(
        { use: 'stt.openai_compatible', options: sttOpenAiCompatibleOptionsSchema.parse({}) },
        { format: 'ulaw_8000', endpoint: { url: fake.baseUrl, apiKey: '' }, wantWords: words },
      )
      const events = stream[Symbol.asyncIterator]() as AsyncIterator<SttEvent>
      const audio = phone(segmentMs)
      const totals: number[] = []
      const serverTimes: number[] = []
      for (let i = 0; i < turns + 3; i++) {
        for (let at = 0; at < audio.length; at += 160) stream.pushAudio(audio.subarray(at, at + 160))
        const t0 = performance.now()
        stream.finalize()
        await next(events, (e) => e.type === 'end_of_turn')
        const request = fake.transcriptions.at(-1)!
        // The first turns warm the JIT and the connection pool.
        if (i >= 3) {
          totals.push(performance.now() - t0)
          serverTimes.push((request.answeredAt ?? request.receivedAt) - request.receivedAt)
        }
      }
      await stream.close()
      rows.push(row(`stt segment ${segmentMs / 1000} s, ${words ? 'verbose_json' : 'json'}`, delayMs, totals, serverTimes))
    }
    for (const [delayMs, format] of [
      [0, 'ulaw_8000'],
      [100, 'ulaw_8000'],
      [100, 'pcm_16000'],
    ] as const) {
      fake.options.firstByteMs = delayMs
      const stream = createTtsStream(
        { use: 'tts.openai_compatible', options: ttsOpenAiCompatibleOptionsSchema.parse({}) },
        { outputFormat: format, endpoint: { url: fake.baseUrl, apiKey: '' } },
      )
      const events = stream[Symbol.asyncIterator]() as AsyncIterator<TtsEvent>
      const totals: number[] = []
      for (let i = 0; i < turns + 3; i++) {
        const id = `c${i}`
        const t0 = performance.now()
        stream.pushText(id, 'We open at nine.')
        stream.flush(id)
        await next(events, (e) => e.type === 'audio' && e.contextId === id)
        if (i >= 3) totals.push(performance.now() - t0)
        await next(events, (e) => e.type === 'done' && e.contextId === id)
      }
      await stream.close()
      rows.push(row(`tts first audio byte, ${format}`, delayMs, totals))
    }
  } finally {
    await fake.close()
  }
  return rows
}
