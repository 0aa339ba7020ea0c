import { Framer } from '../audio/framer.js'
import { PCM16_SCALE } from '../audio/pcm16.js'
import { sharedVadBatcher, type VadBatcher, type VadJob } from './vad-batcher.js'
import { VadFrameProcessor, VadFrameResult } from './vad-frame-processor.js'
import { resolveVadOptions, type VadOptions } from './vad-options.js'
import { SILERO_STATE_SIZE, sileroContextSamples, sileroFrameSamples, type SileroSampleRate } from './silero-model.js'
import type { VadEvent, VadSpan } from './vad-events.js'

/** Options of one call's VAD stream. */
export interface VadStreamOptions extends Partial<VadOptions> {
  /** Input rate of the PCM16 pushed in; the model runs natively at this rate. Default 8000. */
  sampleRate?: SileroSampleRate
  /** Attach the segment's audio (pre-pad through end) to `speech_end`. Default false. */
  keepSegmentAudio?: boolean
  /**
   * Frames allowed to wait for the model; beyond this the waiting frames are skipped as silence so a stalled
   * model cannot build up latency. Default 64 (~2 s); use Infinity for offline files pushed faster than real time.
   */
  maxQueuedFrames?: number
  /** Inference batcher; default the process-wide one. */
  batcher?: VadBatcher
  /** Emit a `frame` event with each frame's probability. Default true; the call pipeline turns it off (an object per frame). */
  frameEvents?: boolean
}

/**
 * Per-call Silero VAD: push PCM16 chunks of any size; frames (32 ms) go through the shared batcher in order and
 * the vad-web frame algorithm turns probabilities into events. Model state and context live here, per call.
 */
export class VadStream {
  readonly options: Readonly<VadOptions>
  readonly sampleRate: SileroSampleRate
  /** Samples per frame at the input rate. */
  readonly frameSize: number
  readonly #onEvent: (event: VadEvent) => void
  readonly #batcher: VadBatcher
  readonly #framer: Framer
  readonly #processor: VadFrameProcessor
  readonly #keepAudio: boolean
  readonly #frameEvents: boolean
  readonly #maxQueued: number
  readonly #history: number
  readonly #ctx: number
  #ring: Int16Array
  #slots: number
  #received = 0
  #processed = 0
  #skipBefore = 0
  #skipped = 0
  #inflight = false
  #closed = false
  #failed: Error | undefined
  #modelResetPending = false
  readonly #job: VadJob
  readonly #context: Float32Array
  #seg = new Int16Array(0)
  #segLen = 0
  #waiters: { resolve: () => void; reject: (e: unknown) => void }[] = []

  constructor(onEvent: (event: VadEvent) => void, options: VadStreamOptions = {}) {
    const { sampleRate = 8000, keepSegmentAudio = false, maxQueuedFrames = 64, batcher, frameEvents = true, ...vad } = options
    this.options = Object.freeze(resolveVadOptions(vad))
    this.sampleRate = sampleRate
    this.frameSize = sileroFrameSamples(sampleRate)
    this.#ctx = sileroContextSamples(sampleRate)
    this.#onEvent = onEvent
    this.#batcher = batcher ?? sharedVadBatcher()
    this.#framer = new Framer(this.frameSize)
    this.#processor = new VadFrameProcessor(this.options)
    this.#keepAudio = keepSegmentAudio
    this.#frameEvents = frameEvents
    this.#maxQueued = Math.max(1, maxQueuedFrames)
    this.#history = Math.max(this.options.preSpeechPadFrames, this.options.bufferFrames) + 1
    this.#slots = Math.min(this.#maxQueued, 64) + this.#history + 2
    this.#ring = new Int16Array(this.#slots * this.frameSize)
    this.#context = new Float32Array(this.#ctx)
    const state = new Float32Array(SILERO_STATE_SIZE)
    this.#job = {
      sampleRate,
      input: new Float32Array(this.#ctx + this.frameSize),
      state,
      stateHalves: [state.subarray(0, SILERO_STATE_SIZE / 2), state.subarray(SILERO_STATE_SIZE / 2)],
      done: (err, p) => this.#onResult(err, p),
      behind: false,
    }
  }

  /** True while inside a speech segment. */
  get speaking(): boolean {
    return this.#processor.speaking
  }

  /** Frames whose probability is known. */
  get framesProcessed(): number {
    return this.#processed
  }

  /** Frames skipped (treated as silence without inference) because the model fell behind. */
  get skippedFrames(): number {
    return this.#skipped
  }

  /** Push PCM16 audio at `sampleRate`, any chunk size. Events follow asynchronously. */
  push(chunk: Int16Array): void {
    if (this.#closed || this.#failed !== undefined) return
    this.#framer.push(chunk, this.#onFrame)
    this.#pump()
  }

  /** Resolve once every complete frame pushed so far has been processed. */
  drain(options: { signal?: AbortSignal } = {}): Promise<void> {
    const { signal } = options
    signal?.throwIfAborted()
    if (this.#failed !== undefined) return Promise.reject(this.#failed)
    if (this.#closed || this.#idle()) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const w = {
        resolve: () => {
          signal?.removeEventListener('abort', onAbort)
          resolve()
        },
        reject: (e: unknown) => {
          signal?.removeEventListener('abort', onAbort)
          reject(e)
        },
      }
      const onAbort = (): void => {
        this.#waiters = this.#waiters.filter((x) => x !== w)
        reject(signal?.reason)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#waiters.push(w)
    })
  }

  /** End of input: process queued frames (a trailing partial frame is dropped), then close any open segment. */
  async end(options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.drain(options)
    if (this.#closed) return
    this.#finishSegment(this.#processor.endSegment(this.#processed - 1), this.#processed - 1)
  }

  /** Drop any open segment and restart the model's state from the next frame (e.g. push-to-talk release). */
  reset(): void {
    this.#processor.reset(this.#processed)
    this.#modelResetPending = true
    this.#segLen = 0
  }

  /** Stop: later pushes are ignored, pending results discarded, waiters resolved. Idempotent. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    const ws = this.#waiters.splice(0)
    for (const w of ws) w.resolve()
  }

  readonly #onFrame = (frame: Int16Array): void => {
    if (this.#received - this.#processed >= this.#slots - this.#history) this.#growRing()
    this.#ring.set(frame, (this.#received % this.#slots) * this.frameSize)
    this.#received++
    if (this.#received - this.#processed > this.#maxQueued) this.#skipBefore = this.#received - 1
  }

  #idle(): boolean {
    return !this.#inflight && this.#processed === this.#received
  }

  #frameAt(k: number): Int16Array {
    const off = (k % this.#slots) * this.frameSize
    return this.#ring.subarray(off, off + this.frameSize)
  }

  #pump(): void {
    while (!this.#inflight && this.#processed < this.#received && !this.#closed && this.#failed === undefined) {
      const k = this.#processed
      if (this.#modelResetPending) {
        this.#modelResetPending = false
        this.#job.state.fill(0)
        this.#context.fill(0)
      }
      // Index loops over the ring rather than views: this runs per frame per call, and a view is an allocation.
      const input = this.#job.input
      const context = this.#context
      const ctx = this.#ctx
      const ring = this.#ring
      const at = (k % this.#slots) * this.frameSize
      const inv = 1 / PCM16_SCALE
      input.set(context, 0)
      for (let i = 0; i < this.frameSize; i++) input[ctx + i] = ring[at + i]! * inv
      for (let i = 0, from = input.length - ctx; i < ctx; i++) context[i] = input[from + i]!
      if (k < this.#skipBefore) {
        this.#skipped++
        this.#batcher.noteSkipped(1)
        this.#handle(k, 0)
        continue
      }
      this.#inflight = true
      this.#job.behind = this.#received - k > 1
      this.#batcher.submit(this.#job)
      return
    }
    if (this.#idle() && this.#waiters.length > 0) {
      const ws = this.#waiters.splice(0)
      for (const w of ws) w.resolve()
    }
  }

  #onResult(err: Error | undefined, probability: number): void {
    this.#inflight = false
    if (this.#closed) return
    if (err !== undefined) {
      this.#failed = err
      const ws = this.#waiters.splice(0)
      for (const w of ws) w.reject(err)
      this.#onEvent({ type: 'error', error: err })
      return
    }
    this.#handle(this.#processed, probability)
    this.#pump()
  }

  #handle(k: number, probability: number): void {
    this.#processed = k + 1
    const p = this.#processor
    if (this.#frameEvents) this.#onEvent({ type: 'frame', index: k, probability, isSpeech: p.isSpeech(probability) })
    const r = p.process(k, probability)
    const fs = this.frameSize
    if (r & VadFrameResult.SPEECH_START) {
      const startSample = k * fs
      this.#onEvent({ type: 'speech_start', index: k, startSample, startMs: this.#ms(startSample) })
      if (this.options.gateAudio) {
        const from = Math.max(k - this.options.bufferFrames, p.floor)
        this.#emitAudio(from, k)
      }
      if (this.#keepAudio) {
        this.#segLen = 0
        for (let j = p.segment.audioStart; j <= k; j++) this.#appendSeg(this.#frameAt(j))
      }
    } else if (p.speaking || r & (VadFrameResult.SPEECH_END | VadFrameResult.MISFIRE)) {
      if (this.options.gateAudio) this.#emitAudio(k, k)
      if (this.#keepAudio) this.#appendSeg(this.#frameAt(k))
    }
    if (r & VadFrameResult.SPEECH_REAL_START) {
      const startSample = p.segment.firstSpeech * fs
      this.#onEvent({ type: 'speech_real_start', index: k, startSample, startMs: this.#ms(startSample) })
    }
    this.#finishSegment(r, k)
  }

  #finishSegment(r: number, k: number): void {
    if (!(r & (VadFrameResult.SPEECH_END | VadFrameResult.MISFIRE))) return
    const s = this.#processor.segment
    const fs = this.frameSize
    const span: VadSpan = {
      startSample: s.firstSpeech * fs,
      endSample: (s.lastSpeech + 1) * fs,
      startMs: this.#ms(s.firstSpeech * fs),
      endMs: this.#ms((s.lastSpeech + 1) * fs),
      audioStartSample: s.audioStart * fs,
      audioEndSample: (k + 1) * fs,
      speechFrames: s.speechFrames,
    }
    if (r & VadFrameResult.MISFIRE) this.#onEvent({ type: 'misfire', ...span })
    else if (this.#keepAudio) this.#onEvent({ type: 'speech_end', ...span, audio: this.#seg.slice(0, this.#segLen) })
    else this.#onEvent({ type: 'speech_end', ...span })
    this.#segLen = 0
  }

  #emitAudio(from: number, to: number): void {
    // Frames from..to are contiguous in the ring unless they wrap; emit each contiguous run.
    let j = from
    while (j <= to) {
      const slot = j % this.#slots
      const run = Math.min(to - j + 1, this.#slots - slot)
      const off = slot * this.frameSize
      this.#onEvent({ type: 'audio', samples: this.#ring.subarray(off, off + run * this.frameSize), startSample: j * this.frameSize })
      j += run
    }
  }

  #appendSeg(frame: Int16Array): void {
    if (this.#segLen + frame.length > this.#seg.length) {
      const grown = new Int16Array(Math.max(this.#seg.length * 2, this.#segLen + frame.length, 16 * this.frameSize))
      grown.set(this.#seg.subarray(0, this.#segLen))
      this.#seg = grown
    }
    this.#seg.set(frame, this.#segLen)
    this.#segLen += frame.length
  }

  #growRing(): void {
    const slots = this.#slots * 2
    const ring = new Int16Array(slots * this.frameSize)
    const oldest = Math.max(0, this.#processed - this.#history)
    for (let k = oldest; k < this.#received; k++) ring.set(this.#frameAt(k), (k % slots) * this.frameSize)
    this.#ring = ring
    this.#slots = slots
  }

  #ms(sample: number): number {
    return (sample * 1000) / this.sampleRate
  }
}
