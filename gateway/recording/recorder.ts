/**
 * The recorder of a session (recording-port.ts says what one is): two channels (caller, agent) placed on one timeline from
 * the moment the session connected, written as chunks while the call runs. Every method is synchronous and cheap, so
 * the audio path never waits for it; storage happens on a bounded queue behind it, and a store that fails or falls
 * behind fails the recording, never the call.
 */
import { Track } from './recording-track.js'
import { ChunkWrites } from './chunk-writes.js'
import type { Log } from '../../core/log.js'
import { AGENT_CHANNEL, CALLER_CHANNEL, MAX_CHUNK_SAMPLES, type RecordingChunk } from '../store/recording-chunks.js'
import type { RecordedAudio, Recorder, RecordingOutcome, RecordingSink } from './recording-port.js'

/** Options of a `ChunkRecorder`; every bound has a default. */
export interface ChunkRecorderOptions {
  sink: RecordingSink
  sampleRate: number
  log: Log
  /** How often buffered audio is handed to the sink. Default 1000 ms. */
  flushIntervalMs?: number
  /** Bytes waiting for the sink above which the recording fails (the store fell behind). Default 1 MiB. */
  maxQueuedBytes?: number
  /**
   * True for a sink failure worth retrying (the database restarting): the batch is kept and written again,
   * while the queue stays within `maxQueuedBytes` (about 30 s of a call) and for at most `retryForMs`.
   */
  isTransient?: (e: unknown) => boolean
  /** How long transient failures are retried before the recording fails. Default 60 s. */
  retryForMs?: number
  /**
   * The recorder is given G.711 mu-law bytes (`Uint8Array`), not PCM16, and stores them as they are, one byte a
   * sample: for a call that is mu-law both ways (carrier, SIP at 8 kHz) nothing is decoded to be recorded
   * and nothing encoded again, and half the bytes are written and kept. Silence (masks, pauses) is 0xFF, mu-law's 0.
   * Readers tell the two apart by size (`RecordingChunk.pcm`).
   */
  mulaw?: boolean
}

/** Pauses a recording keeps (a session pausing more often forgets the oldest, long written by then). */
const MAX_PAUSES = 200

/** Caller audio this close to where the previous chunk ended continues it. */
const SNAP_MS = 3

/** The mu-law byte of a zero sample. */
const MULAW_SILENCE = 0xff

/** `Recorder` buffering about a second per channel and writing chunks through a `RecordingSink`. */
export class ChunkRecorder implements Recorder {
  readonly #opts: ChunkRecorderOptions
  readonly #rate: number
  readonly #mulaw: boolean
  readonly #caller: Track
  readonly #agent: Track
  /** Caller masks still ahead of the caller audio received (a digit masks a little of what comes next). */
  #masks: { from: number; to: number }[] = []
  /** Pauses, in samples; the last one's `to` is Infinity while it lasts. Both channels are silent over them. */
  #pauses: { from: number; to: number }[] = []
  #seq = 0
  readonly #writes: ChunkWrites
  #started: Promise<void> | undefined
  #timer: NodeJS.Timeout | undefined
  #error: string | undefined
  #finished = false

  constructor(options: ChunkRecorderOptions) {
    this.#opts = options
    this.#rate = options.sampleRate
    this.#mulaw = options.mulaw === true
    this.#caller = new Track(CALLER_CHANNEL, this.#mulaw)
    this.#agent = new Track(AGENT_CHANNEL, this.#mulaw)
    this.#writes = new ChunkWrites(options, {
      started: () => this.#started,
      failed: () => this.#error !== undefined,
      fail: (error) => this.#fail(error),
    })
  }

  /** Creates the recording in the sink and starts the flush timer. */
  start(): void {
    if (this.#started !== undefined) return
    this.#started = this.#opts.sink.start().catch((e: unknown) => this.#fail(`recording could not start: ${message(e)}`))
    // A random phase: calls that connected together (a campaign, a restart) must not all write in the same tick.
    const every = this.#opts.flushIntervalMs ?? 1000
    this.#timer = setTimeout(() => {
      this.#flushAll(false)
      this.#timer = setInterval(() => this.#flushAll(false), every)
      this.#timer.unref()
    }, Math.random() * every)
    this.#timer.unref()
  }

  /** True once the recording failed; later audio is ignored. */
  get failed(): boolean {
    return this.#error !== undefined
  }

  #sample(ms: number): number {
    return Math.max(0, Math.round((ms * this.#rate) / 1000))
  }

  caller(samples: RecordedAudio, atMs: number): void {
    if (!this.#live || samples.length === 0 || !this.#fits(samples)) return
    const t = this.#caller
    let start = Math.max(0, this.#sample(atMs) - samples.length)
    if (Math.abs(start - t.cursor) <= this.#sample(SNAP_MS)) {
      // Rounding (and a resampler's varying output) must not split a continuous voice into a chunk per frame.
      start = t.cursor
    } else if (start < t.cursor) {
      // Earlier than the audio before it ended: that audio arrived late and was placed late. The part not yet
      // written moves back with it, so the voice stays continuous and every sample from here on sits at its time.
      // Where it lands over audio already written (placed late by the same amount), it wins: the recording loses
      // that late-placed tail, never its timing against the agent channel.
      if (t.length > 0 && t.end === t.cursor) {
        t.start = Math.max(0, t.start - (t.cursor - start))
        start = t.end
        // Pauses are times, not audio: what moved into a paused stretch is silent there.
        for (const p of this.#pauses) zeroRange(t.buf.subarray(0, t.length), t.start, p.from, p.to)
      }
    }
    t.cursor = start + samples.length
    let data = this.#unpaused(samples, start)
    if (this.#masks.length > 0) {
      if (data === samples) data = copyOf(samples)
      for (const m of this.#masks) zeroRange(data, start, m.from, m.to)
      this.#masks = this.#masks.filter((m) => m.to > t.cursor)
    }
    t.place(data, start, () => this.#flush(t))
  }

  agent(samples: RecordedAudio, atMs: number): void {
    if (!this.#live || samples.length === 0 || !this.#fits(samples)) return
    const start = this.#sample(atMs)
    this.#agent.place(this.#unpaused(samples, start), start, () => this.#flush(this.#agent))
  }

  pause(atMs: number): void {
    if (!this.#live || this.#pauses.at(-1)?.to === Number.POSITIVE_INFINITY) return
    this.#pauses.push({ from: this.#sample(atMs), to: Number.POSITIVE_INFINITY })
    if (this.#pauses.length > MAX_PAUSES) this.#pauses.shift()
  }

  resume(atMs: number): void {
    const last = this.#pauses.at(-1)
    if (last === undefined || last.to !== Number.POSITIVE_INFINITY) return
    last.to = Math.max(last.from, this.#sample(atMs))
    // Audio placed in the pause before it began (agent audio is placed ahead when its playout is estimated).
    this.#silenceBoth(last.from, last.to)
  }

  /** Silences both channels over [from, to) samples: what is buffered and what is written. */
  #silenceBoth(from: number, to: number): void {
    for (const t of [this.#caller, this.#agent]) {
      zeroRange(t.buf.subarray(0, t.length), t.start, from, to)
      if (from < t.writtenEnd) this.#silence(t.channel, from, Math.min(to, t.writtenEnd))
    }
  }

  /** Audio in the encoding this recorder stores; otherwise the recording fails (a bug, not a caller's fault). */
  #fits(samples: RecordedAudio): boolean {
    if (samples instanceof Uint8Array === this.#mulaw) return true
    this.#fail(`recording was given ${this.#mulaw ? 'PCM16' : 'mu-law'} audio to store as ${this.#mulaw ? 'mu-law' : 'PCM16'}`)
    return false
  }

  /** `samples` placed at `start` with the paused parts silent (a copy when any is). */
  #unpaused(samples: RecordedAudio, start: number): RecordedAudio {
    const end = start + samples.length
    let data = samples
    for (const p of this.#pauses) {
      if (p.to <= start || p.from >= end) continue
      if (data === samples) data = copyOf(samples)
      zeroRange(data, start, p.from, p.to)
    }
    return data
  }

  clearAgentAfter(atMs: number): void {
    if (!this.#live) return
    const at = this.#sample(atMs)
    const t = this.#agent
    if (t.length > 0 && t.end > at) t.length = Math.max(0, at - t.start)
    if (t.length === 0) t.start = at
    // Audio already written past the clear is overwritten with silence (later chunks win).
    if (t.writtenEnd > at) this.#silence(t.channel, at, t.writtenEnd)
  }

  maskCaller(fromMs: number, toMs: number): void {
    if (!this.#live) return
    const from = this.#sample(fromMs)
    const to = this.#sample(toMs)
    if (to <= from) return
    const t = this.#caller
    zeroRange(t.buf.subarray(0, t.length), t.start, from, to)
    if (from < t.writtenEnd) this.#silence(t.channel, from, Math.min(to, t.writtenEnd))
    if (to > t.end) this.#masks.push({ from, to })
  }

  /**
   * Flushes what is left and completes the recording at `durationMs`. `beforeComplete` runs once the recording's
   * row and audio are stored and before it is marked completed, so whatever it stores (the metadata's spans) is
   * there as soon as anyone can see the recording completed; it must not throw.
   */
  async finish(durationMs: number | undefined, beforeComplete?: () => Promise<void>): Promise<RecordingOutcome> {
    if (this.#finished) throw new Error('recording already finished')
    // A pause that lasts to the end covers everything placed after it began.
    const open = this.#pauses.at(-1)
    if (open !== undefined && open.to === Number.POSITIVE_INFINITY && this.#live) {
      this.#silenceBoth(open.from, Math.max(this.#caller.end, this.#agent.end, this.#caller.writtenEnd, this.#agent.writtenEnd))
    }
    this.#flushAll(true)
    this.#finished = true
    clearInterval(this.#timer)
    await this.#started
    await this.#writes.written
    const sink = this.#opts.sink
    if (this.#error === undefined && durationMs === undefined) this.#error = 'the session end was not stored'
    if (this.#error === undefined && durationMs !== undefined) {
      try {
        await beforeComplete?.()
        await sink.complete(this.#sample(durationMs))
        return { status: 'completed', durationMs }
      } catch (e) {
        this.#error = `recording could not be completed: ${message(e)}`
      }
    }
    const error = this.#error ?? 'recording failed'
    await sink.fail(error).catch((e: unknown) => this.#opts.log.error({ err: e }, 'could not mark the recording failed'))
    return { status: 'failed', error }
  }

  get #live(): boolean {
    return !this.#finished && this.#error === undefined
  }

  /**
   * Hands buffered audio to the sink. The caller's run waits until it holds a second (or the end): until written
   * it can still move back when a less delayed arrival shows it was placed late (see `caller`).
   */
  #flushAll(all: boolean): void {
    if (!this.#live) return
    if (all || this.#caller.length >= this.#rate) this.#flush(this.#caller)
    this.#flush(this.#agent)
  }

  #flush(t: Track): void {
    const chunk = t.take()
    if (chunk !== undefined) this.#enqueue({ seq: ++this.#seq, channel: t.channel, ...chunk })
  }

  #silence(channel: number, from: number, to: number): void {
    for (let at = from; at < to; at += MAX_CHUNK_SAMPLES) {
      this.#enqueue({ seq: ++this.#seq, channel, startSample: at, sampleCount: Math.min(MAX_CHUNK_SAMPLES, to - at), pcm: null })
    }
  }

  #enqueue(chunk: RecordingChunk): void {
    this.#writes.enqueue(chunk)
  }

  #fail(error: string): void {
    if (this.#error !== undefined) return
    this.#error = error
    this.#opts.log.warn({ error }, 'recording failed; the call goes on')
    this.#writes.clear()
    this.#caller.length = 0
    this.#agent.length = 0
  }
}

/** A copy (a Buffer's `slice` is a view of the same memory, and a caller's frame must not be changed). */
function copyOf(samples: RecordedAudio): RecordedAudio {
  return samples instanceof Uint8Array ? new Uint8Array(samples) : samples.slice()
}

/** Silences the part of `data` (placed at sample `start`) that falls in [from, to). */
function zeroRange(data: RecordedAudio, start: number, from: number, to: number): void {
  const a = Math.max(0, from - start)
  const b = Math.min(data.length, to - start)
  if (b > a) data.fill(data instanceof Uint8Array ? MULAW_SILENCE : 0, a, b)
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e)
}
