import { AUDIO_FORMATS, type OutputAudioFormat } from '../../audio/audio-format.js'
import { encodeMulaw } from '../../audio/g711-mulaw.js'
import { int16ToBuffer } from '../../audio/pcm16.js'
import { resample } from '../../audio/resampler.js'
import type { TtsLocalOptions } from '../../options/tts-options.js'
import { silentLogger, type PipelineLogger } from '../../runtime/logger.js'
import { VendorErrorCode, type VendorErrorCodeValue } from '../socket/vendor-errors.js'
import { EspeakError, sharedEspeakEngine, type EspeakEngine } from './espeak-engine.js'
import { speechCacheOf } from './speech-cache.js'
import { type SentenceContextState, SentenceContexts } from './sentence-contexts.js'
import type { TtsEvent, TtsStream } from './tts-stream.js'

/** Stable codes of `tts.local` error events (registered with the vendor codes). */
export const LocalTtsErrorCode = {
  Unavailable: VendorErrorCode.LocalUnavailable,
  VoiceUnknown: VendorErrorCode.LocalVoiceUnknown,
  SynthesisFailed: VendorErrorCode.LocalFailed,
} as const

/** What a `tts.local` stream needs besides the plugin options. */
export interface LocalTtsStreamOptions {
  outputFormat: OutputAudioFormat
  signal?: AbortSignal
  logger?: PipelineLogger
  /** Where the engine comes from; defaults to the process-wide shared espeak-ng instance. */
  loadEngine?: () => Promise<EspeakEngine>
}

/** Audio per `audio` event. */
const CHUNK_MS = 100
/** Synthesis pauses while this many events wait for the consumer (~10 s of speech): bounded, nothing dropped. */
const QUEUE_HIGH_WATER = 100
type Job = { contextId: string; sentence: string } | { contextId: string; done: true }

/**
 * `tts.local`: offline speech from espeak-ng (22,050 Hz), resampled to the output format. Text of a context is
 * spoken sentence by sentence as soon as a boundary arrives, so long replies start playing early; one sentence is
 * synthesized per event-loop turn (`setImmediate` between sentences) because synthesis is synchronous.
 *
 * Measured on the 2-core dev machine (Node 20.20): loading the module takes 260 ms (plain node) to 480 ms (tsx) once
 * per process and ~60 MB; synthesis real-time factor ~0.05-0.14 for the first few sentences (JIT warm-up of the asm.js
 * build; a 5 s sentence then blocks ~0.6 s once), then 0.003-0.007 (a 2 s sentence blocks ~10 ms).
 */
export class LocalTtsStream implements TtsStream {
  readonly #options: TtsLocalOptions
  readonly #format: OutputAudioFormat
  readonly #signal: AbortSignal | undefined
  readonly #logger: PipelineLogger
  readonly #loadEngine: () => Promise<EspeakEngine>
  readonly #contexts: SentenceContexts<SentenceContextState>
  readonly #events: TtsEvent[] = []
  readonly #readers: Array<(result: IteratorResult<TtsEvent, undefined>) => void> = []
  readonly #onAbort = () => this.#shutdown()
  #engine: EspeakEngine | undefined
  #started = false
  #running = false
  #closing = false
  #ended = false
  #closePromise: Promise<void> | undefined
  #resolveClose: (() => void) | undefined
  #resumeSynthesis: (() => void) | undefined

  constructor(options: TtsLocalOptions, stream: LocalTtsStreamOptions) {
    this.#options = options
    this.#format = stream.outputFormat
    this.#signal = stream.signal
    this.#logger = stream.logger ?? silentLogger
    this.#contexts = new SentenceContexts('tts.local', this.#logger)
    this.#loadEngine = stream.loadEngine ?? sharedEspeakEngine
  }

  /** Start loading the engine so the first utterance does not wait for it. Idempotent. */
  start(): this {
    if (this.#started) return this
    this.#started = true
    if (this.#signal?.aborted) {
      this.#shutdown()
      return this
    }
    this.#signal?.addEventListener('abort', this.#onAbort, { once: true })
    this.#loadEngine().then(
      (engine) => this.#onEngine(engine),
      (error: unknown) => {
        const code = error instanceof EspeakError ? error.code : LocalTtsErrorCode.Unavailable
        this.#fail(code, `tts.local: ${error instanceof Error ? error.message : String(error)}`)
      },
    )
    return this
  }

  get closed(): boolean {
    return this.#closing || this.#ended
  }

  pushText(contextId: string, text: string): void {
    if (this.closed) return
    const context = this.#contexts.pushText(contextId, text, () => ({ phase: 'open', pending: '', sentences: [], chars: 0 }))
    if (context === undefined) return
    this.#kick()
  }

  flush(contextId: string): void {
    if (this.closed) return
    if (this.#contexts.flush(contextId) === undefined) return
    this.#kick()
  }

  cancel(contextId: string): void {
    if (!this.#contexts.cancel(contextId)) return
    // Audio already synthesized but not yet read is dropped too (only an event already handed to a pending
    // next() of a background reader cannot be recalled).
    let kept = 0
    for (const event of this.#events) {
      if (!('contextId' in event) || event.contextId !== contextId) this.#events[kept++] = event
    }
    this.#events.length = kept
    this.#maybeResume()
    this.#maybeFinishClose()
  }

  close(): Promise<void> {
    if (this.#closePromise) return this.#closePromise
    if (this.#ended) {
      this.#closePromise = Promise.resolve()
      return this.#closePromise
    }
    this.#closing = true
    // Contexts never flushed have no end; only flushed ones are finished.
    for (const [contextId, context] of this.#contexts) {
      if (context.phase === 'open') this.#contexts.delete(contextId)
    }
    this.#closePromise = new Promise((resolve) => {
      this.#resolveClose = resolve
    })
    this.#maybeFinishClose()
    return this.#closePromise
  }

  [Symbol.asyncIterator](): AsyncIterator<TtsEvent, undefined> {
    return { next: () => this.#next() }
  }

  #next(): Promise<IteratorResult<TtsEvent, undefined>> {
    const event = this.#events.shift()
    if (event !== undefined) {
      this.#maybeResume()
      return Promise.resolve({ done: false, value: event })
    }
    if (this.#ended) return Promise.resolve({ done: true, value: undefined })
    return new Promise((resolve) => this.#readers.push(resolve))
  }

  #emit(event: TtsEvent): void {
    if (this.#ended) return
    const reader = this.#readers.shift()
    if (reader) reader({ done: false, value: event })
    else this.#events.push(event)
  }

  #onEngine(engine: EspeakEngine): void {
    if (this.#ended) return
    if (!engine.hasVoice(this.#options.voice)) {
      this.#fail(LocalTtsErrorCode.VoiceUnknown, `tts.local: espeak-ng has no voice "${this.#options.voice}"`)
      return
    }
    this.#engine = engine
    this.#logger.debug({ stream: 'tts.local', loadMs: Math.round(engine.loadMs) }, 'espeak-ng ready')
    this.#kick()
  }

  #kick(): void {
    if (this.#running || this.#engine === undefined || this.#ended) return
    this.#running = true
    void this.#synthesizeAll(this.#engine).finally(() => {
      this.#running = false
      this.#maybeFinishClose()
    })
  }

  async #synthesizeAll(engine: EspeakEngine): Promise<void> {
    for (let job = this.#nextJob(); job !== undefined && !this.#ended; job = this.#nextJob()) {
      if ('done' in job) {
        this.#contexts.delete(job.contextId)
        this.#emit({ type: 'done', contextId: job.contextId })
        continue
      }
      this.#speak(engine, job.contextId, job.sentence)
      if (this.#events.length >= QUEUE_HIGH_WATER) {
        await new Promise<void>((resolve) => {
          this.#resumeSynthesis = resolve
        })
      }
      // Let sockets, timers and other calls' streams run between sentences.
      await new Promise<void>((resolve) => setImmediate(resolve))
    }
  }

  #nextJob(): Job | undefined {
    for (const [contextId, context] of this.#contexts) {
      const sentence = context.sentences.shift()
      if (sentence !== undefined) return { contextId, sentence }
      if (context.phase === 'flushed') return { contextId, done: true }
    }
    return undefined
  }

  #speak(engine: EspeakEngine, contextId: string, sentence: string): void {
    const settings = { voice: this.#options.voice, rate: this.#options.rate }
    const cache = speechCacheOf(engine)
    const kept = cache.get(this.#format, settings, sentence)
    if (kept !== undefined) {
      this.#emitAudio(contextId, kept)
      return
    }
    let samples: Int16Array
    try {
      samples = engine.synthesize(sentence, settings)
    } catch (error) {
      this.#logger.warn({ stream: 'tts.local', contextId, err: String(error) }, 'synthesis failed')
      this.#contexts.delete(contextId)
      this.#emitError(LocalTtsErrorCode.SynthesisFailed, `tts.local: synthesis failed (${String(error)})`, false, contextId)
      this.#emit({ type: 'done', contextId })
      return
    }
    if (!this.#contexts.has(contextId) || this.#ended) return
    const converted = resample(samples, engine.sampleRate, AUDIO_FORMATS[this.#format].sampleRate)
    cache.set(this.#format, settings, sentence, converted)
    this.#emitAudio(contextId, converted)
  }

  /** `samples` (the cache's: never handed out themselves) as `audio` events of CHUNK_MS each, copied. */
  #emitAudio(contextId: string, samples: Int16Array): void {
    if (!this.#contexts.has(contextId) || this.#ended) return
    const chunk = (AUDIO_FORMATS[this.#format].sampleRate * CHUNK_MS) / 1000
    for (let offset = 0; offset < samples.length; offset += chunk) {
      const part = samples.subarray(offset, Math.min(offset + chunk, samples.length))
      const audio = this.#format === 'ulaw_8000' ? bytesOf(encodeMulaw(part)) : int16ToBuffer(part.slice())
      this.#emit({ type: 'audio', contextId, audio })
    }
  }

  #emitError(code: VendorErrorCodeValue, message: string, fatal: boolean, contextId?: string): void {
    // The local codes live in the vendor registry (pipeline/vendors/socket/vendor-errors.ts): one error event shape for every TTS.
    this.#emit({ type: 'error', code, message, fatal, ...(contextId === undefined ? {} : { contextId }) })
  }

  #fail(code: VendorErrorCodeValue, message: string): void {
    if (this.#ended) return
    this.#logger.error({ stream: 'tts.local', code }, message)
    this.#emitError(code, message, true)
    this.#shutdown()
  }

  #maybeResume(): void {
    if (this.#resumeSynthesis === undefined || this.#events.length >= QUEUE_HIGH_WATER / 2) return
    const resume = this.#resumeSynthesis
    this.#resumeSynthesis = undefined
    resume()
  }

  #maybeFinishClose(): void {
    if (!this.#closing || this.#ended || this.#running) return
    // Flushed contexts still speak; while the engine loads they wait for it (a failed load shuts down anyway).
    if (this.#contexts.size > 0 && this.#started) return
    this.#shutdown()
  }

  /** Stop now: pending synthesis is dropped; readers get the events already queued, then the end. */
  #shutdown(): void {
    if (this.#ended) return
    this.#ended = true
    this.#signal?.removeEventListener('abort', this.#onAbort)
    this.#contexts.clear()
    this.#resumeSynthesis?.()
    this.#resumeSynthesis = undefined
    for (const reader of this.#readers.splice(0)) reader({ done: true, value: undefined })
    this.#resolveClose?.()
  }
}

function bytesOf(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/** Create and start a `tts.local` stream (the shared espeak-ng engine starts loading at once). */
export function createLocalTtsStream(options: TtsLocalOptions, stream: LocalTtsStreamOptions): TtsStream {
  return new LocalTtsStream(options, stream).start()
}
