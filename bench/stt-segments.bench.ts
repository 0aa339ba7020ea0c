// Self-hosted speech latency through the adapters, against the speech fake answering after a set delay: end of
// speech (finalize) to the final transcript for `stt.openai_compatible` segments, and text to the first audio byte
// out of `tts.openai_compatible`. The fake runs in a process of its own, so none of its work (reading the form and
// the WAV, its timers, writing the answer) runs on the event loop being timed.
//
// Where the time stamps are taken:
// - total: in this process, from just before finalize() (STT) or pushText() (TTS) to the consumer holding the
//   `end_of_turn` (STT) or the first `audio` event (TTS).
// - server: in the fake's process, from the request's whole body in to the last answer byte written (STT), or to the
//   first audio byte written (TTS). It includes the set delay.
// - gateway overhead = total - server: building the WAV and the multipart body, the HTTP client, writing the
//   request, loopback transit both ways (tens of microseconds), reading and parsing the answer, resampling the first
//   audio, the event queue. The upload of the body is counted as the gateway's (the server span starts once it is
//   all in).
// - "to request sent": from the start to the request's `finish` (its whole body handed to the socket; see
//   RequestStamps); "answer to event": from the answer read to its end (STT) or its headers, which travel with the
//   first audio chunk (TTS), to the consumer holding the event. The gateway's own time is the two together: the
//   overhead less loopback transit and the upload's wait for the server's process to read it.
// - the floor: the same request (a 2 s segment's form, built once) posted with a bare node:http keep-alive request
//   and its answer read, no adapter around it. Its overhead is what the machine, loopback and Node's HTTP client
//   cost at that moment; the adapter's rows less the floor is the gateway's own part.
// - machine pauses: an idle sentinel process (stall-sentinel.ts, as in carrier-calls) records the moments the whole
//   machine stood still (this VM's host pauses it for 20 to 60 ms now and then; see stalls.ts). A turn's overhead
//   "less machine pauses" has the part of the turn the sentinel sat through a stall of over 5 ms taken off (shorter
//   ones can be the turn's own work keeping both cores busy): the turns a pause fell in are counted, and the raw
//   p99 is printed beside it.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { Agent, type ClientRequest, type IncomingMessage, request } from 'node:http'
import { encodeMulaw } from '../pipeline/audio/g711-mulaw.js'
import { wavHeader } from '../pipeline/audio/wav.js'
import { multipartPieces } from '../pipeline/vendors/stt/openai-transcription-codec.js'
import { sttOpenAiCompatibleOptionsSchema, ttsOpenAiCompatibleOptionsSchema } from '../pipeline/options/openai-compatible-options.js'
import type { SttEvent } from '../pipeline/vendors/stt/stt-stream.js'
import type { TtsEvent } from '../pipeline/vendors/tts/tts-stream.js'
import { createSttStream, createTtsStream } from '../pipeline/vendors/open-vendor.js'
import { startSpeechServerProcess } from '../test/fakes/openai-speech/speech-server-child.js'
import { type BenchOptions, type BenchRow, fmt } from './bench-util.js'
import { startSentinel } from './carrier-bench-setup.js'
import { type Stall, sharedNow, uncovered } from './stalls.js'

/** Turns run before measuring, to warm the JIT and the connection pool. */
const WARMUP = 3

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

/**
 * When the adapter's request went out and its answer came in (this process's performance.now()), from node:http's
 * `http.client.request.start` diagnostics channel: the request's `finish` (the whole body handed to the socket), its
 * `response` (the status line and headers in), and the response's `end` (read to its last byte).
 */
class RequestStamps {
  bodySent = Number.NaN
  headers = Number.NaN
  end = Number.NaN
  readonly #onStart = (message: unknown) => {
    const { request } = message as { request: ClientRequest }
    if (!request.path.includes('/audio/')) return
    request.once('finish', () => (this.bodySent = performance.now()))
    request.once('response', (response: IncomingMessage) => {
      this.headers = performance.now()
      response.once('end', () => (this.end = performance.now()))
    })
  }

  constructor() {
    subscribe('http.client.request.start', this.#onStart)
  }

  reset(): void {
    this.bodySent = this.headers = this.end = Number.NaN
  }

  close(): void {
    unsubscribe('http.client.request.start', this.#onStart)
  }
}

/** One measured turn: total, the server's own time (from the fake), and the two gateway stretches. */
interface Turn {
  total: number
  server: number
  toSent: number
  toEvent: number
  /** CPU time of this process (the gateway's code and the bench's loop) during the turn. */
  cpu: number
  /** When it started, on the clock processes share (stalls.ts's sharedNow), to match with the machine's pauses. */
  at: number
  /** Of `total`, the ms the machine stood still (the sentinel's stalls inside the turn); set once the case is done. */
  paused?: number
}

/**
 * A stall of the idle sentinel longer than this is the machine standing still. Shorter ones are also the two cores
 * busy at once (this process and the fake), time that is the turn's own: they are not taken off.
 */
const MACHINE_PAUSE_MS = 5

/**
 * Of the `ms` from `at`, the time the sentinel saw the machine stand still: the part of the stretch its pauses cover,
 * each pause counted from 1 ms after its last tick (the 1 ms its timer waits anyway).
 */
function pausedWithin(at: number, ms: number, machine: readonly Stall[]): number {
  const pauses = machine.filter((s) => s.to - s.from > MACHINE_PAUSE_MS).map((s) => ({ from: s.from + 1, to: s.to }))
  // The stretch's own length, not `ms`: at + ms - at may differ from ms in its last bit, and a turn no pause touched
  // must come out at exactly 0.
  const turn = { from: at, to: at + ms }
  return turn.to - turn.from - uncovered(turn, pauses)
}

/**
 * A turn through an adapter, from its start `t0` to the event at `t1` (performance.now()), the request's body
 * written at `sent` and its answer in at `answered`, with this process's CPU time since `cpu0`.
 */
function adapterTurn(t0: number, t1: number, sent: number, answered: number, cpu0: number): Omit<Turn, 'server'> {
  return { total: t1 - t0, toSent: sent - t0, toEvent: t1 - answered, cpu: cpuNow() - cpu0, at: performance.timeOrigin + t0 }
}

/** CPU time (user + system) of this process in ms. */
function cpuNow(): number {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

function row(name: string, delayMs: number, turns: Turn[]): BenchRow {
  const over = turns.map((t) => t.total - t.server)
  const paused = turns.filter((t) => (t.paused ?? 0) > 0).length
  // The floor has no request stamps of its own: those cells stay empty.
  const p = (values: number[], q: number) => (values.every(Number.isNaN) ? '' : fmt(percentile(values, q)))
  return {
    case: name,
    turns: turns.length,
    'server delay ms': delayMs,
    'total p50 ms': p(
      turns.map((t) => t.total),
      50,
    ),
    'server p50 ms': p(
      turns.map((t) => t.server),
      50,
    ),
    'overhead p50 ms': p(over, 50),
    'overhead p99 ms': p(over, 99),
    'overhead p99 ms, less machine pauses': p(
      turns.map((t) => t.total - t.server - (t.paused ?? 0)),
      99,
    ),
    'turns a machine pause fell in': paused,
    "gateway's own p99 ms": p(
      turns.map((t) => t.toSent + t.toEvent),
      99,
    ),
    'to request sent p99 ms': p(
      turns.map((t) => t.toSent),
      99,
    ),
    'answer to event p99 ms': p(
      turns.map((t) => t.toEvent),
      99,
    ),
    'cpu p50 ms': p(
      turns.map((t) => t.cpu),
      50,
    ),
  }
}

/** The floor: one form posted with a bare keep-alive node:http request, its answer read to the end; total ms. */
async function barePost(agent: Agent, url: string, body: Buffer, boundary: string): Promise<number> {
  const t0 = performance.now()
  await new Promise<void>((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(body.length) },
      },
      (res) => {
        res.resume()
        res.once('end', resolve)
      },
    )
    req.once('error', reject)
    req.end(body)
  })
  return performance.now() - t0
}

export async function bench({ repeats }: BenchOptions): Promise<BenchRow[]> {
  const count = Math.max(20, repeats * 20)
  const rows: BenchRow[] = []
  const fake = await startSpeechServerProcess({ FAKE_MS_PER_CHAR: '20', FAKE_CHUNK_MS: '20', FAKE_CHUNK_INTERVAL_MS: '0' })
  const sentinel = await startSentinel()
  /** Each turn's share of the machine's pauses, from the sentinel's stalls since the case began. */
  const notePauses = async (turns: readonly Turn[]) => {
    const machine = await sentinel.since(turns[0]?.at ?? 0)
    for (const t of turns) t.paused = pausedWithin(t.at, t.total, machine)
  }
  const stamps = new RequestStamps()
  try {
    for (const [segmentMs, delayMs, words] of [
      [1000, 0, true],
      [2000, 100, true],
      [2000, 100, false],
      [8000, 100, true],
    ] as const) {
      await fake.script({ text: 'what are your opening hours on sundays', delayMs })
      await fake.timings()
      const stream = createSttStream(
        { use: 'stt.openai_compatible', options: sttOpenAiCompatibleOptionsSchema.parse({}) },
        { format: 'ulaw_8000', endpoint: { url: fake.baseUrl, apiKey: '' }, wantWords: words },
      )
      const events = stream[Symbol.asyncIterator]() as AsyncIterator<SttEvent>
      const audio = phone(segmentMs)
      const measured: Omit<Turn, 'server'>[] = []
      for (let i = 0; i < count + WARMUP; i++) {
        for (let at = 0; at < audio.length; at += 160) stream.pushAudio(audio.subarray(at, at + 160))
        stamps.reset()
        const c0 = cpuNow()
        const t0 = performance.now()
        stream.finalize()
        await next(events, (e) => e.type === 'end_of_turn')
        const t1 = performance.now()
        if (i >= WARMUP) measured.push(adapterTurn(t0, t1, stamps.bodySent, stamps.end, c0))
      }
      await stream.close()
      const server = (await fake.timings()).transcriptions.slice(WARMUP)
      const name = `stt segment ${segmentMs / 1000} s, ${words ? 'verbose_json' : 'json'}`
      const turns = measured.map((m, i) => ({ ...m, server: server[i] ?? Number.NaN }))
      await notePauses(turns)
      rows.push(row(name, delayMs, turns))
    }
    {
      // The floor, beside the 2 s json row: the same server delay, a form of the same size.
      await fake.script({ text: 'what are your opening hours on sundays', delayMs: 100 })
      await fake.timings()
      const pcm = Buffer.alloc(2 * 16_000 * 2, 1)
      const boundary = 'voxgate-floor'
      const body = Buffer.concat(
        multipartPieces(
          [
            { name: 'file', filename: 'segment.wav', contentType: 'audio/wav', data: [wavHeader(pcm.length, 16_000), pcm] },
            { name: 'model', value: 'whisper-1' },
            { name: 'response_format', value: 'json' },
          ],
          boundary,
        ),
      )
      const agent = new Agent({ keepAlive: true })
      const measured: { total: number; cpu: number; at: number }[] = []
      for (let i = 0; i < count + WARMUP; i++) {
        const c0 = cpuNow()
        const at = sharedNow()
        const total = await barePost(agent, `${fake.baseUrl}/audio/transcriptions`, body, boundary)
        if (i >= WARMUP) measured.push({ total, cpu: cpuNow() - c0, at })
      }
      agent.destroy()
      const server = (await fake.timings()).transcriptions.slice(WARMUP)
      const turns = measured.map((m, i) => ({ ...m, server: server[i] ?? Number.NaN, toSent: Number.NaN, toEvent: Number.NaN }))
      await notePauses(turns)
      rows.push(row('floor: bare POST of a 2 s form, json', 100, turns))
    }
    for (const [delayMs, format] of [
      [0, 'ulaw_8000'],
      [100, 'ulaw_8000'],
      [100, 'pcm_16000'],
    ] as const) {
      await fake.script({ firstByteMs: delayMs })
      await fake.timings()
      const stream = createTtsStream(
        { use: 'tts.openai_compatible', options: ttsOpenAiCompatibleOptionsSchema.parse({}) },
        { outputFormat: format, endpoint: { url: fake.baseUrl, apiKey: '' } },
      )
      const events = stream[Symbol.asyncIterator]() as AsyncIterator<TtsEvent>
      const measured: Omit<Turn, 'server'>[] = []
      for (let i = 0; i < count + WARMUP; i++) {
        const id = `c${i}`
        stamps.reset()
        const c0 = cpuNow()
        const t0 = performance.now()
        stream.pushText(id, 'We open at nine.')
        stream.flush(id)
        await next(events, (e) => e.type === 'audio' && e.contextId === id)
        const t1 = performance.now()
        if (i >= WARMUP) measured.push(adapterTurn(t0, t1, stamps.bodySent, stamps.headers, c0))
        await next(events, (e) => e.type === 'done' && e.contextId === id)
      }
      await stream.close()
      const server = (await fake.timings()).speech.slice(WARMUP)
      const turns = measured.map((m, i) => ({ ...m, server: server[i] ?? Number.NaN }))
      await notePauses(turns)
      rows.push(row(`tts first audio byte, ${format}`, delayMs, turns))
    }
  } finally {
    stamps.close()
    fake.kill()
    await sentinel.report()
  }
  console.log(
    "server: the fake's own time, measured in its own process (body in to answer written; for TTS to first audio written).\n" +
      "overhead = total - server: the gateway's work both ways plus loopback transit and the upload of the body.\n" +
      "to request sent: start to the request's body written; answer to event: answer in (STT: last byte, TTS: first chunk) to the event.\n" +
      "gateway's own: those two stretches of a turn together, the time its work was in this process (no transit, no server).\n" +
      "cpu: this process's CPU time during the turn (the gateway's code; the least noisy figure here).\n" +
      "floor: the same request from a bare node:http client, no adapter: what the machine and Node's HTTP client cost now.\n" +
      'less machine pauses: each turn less the part an idle sentinel process stood still through for over 5 ms (the VM paused).\n' +
      'Goal: overhead p99 under 5 ms. Wall-clock figures: noisy on a shared machine.',
  )
  return rows
}
