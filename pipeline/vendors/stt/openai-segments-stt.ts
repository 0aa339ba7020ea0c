import { AUDIO_FORMATS, type AudioFormat } from '../../audio/audio-format.js'
import { decodeMulaw } from '../../audio/g711-mulaw.js'
import { bufferToInt16, int16ToBuffer } from '../../audio/pcm16.js'
import { quietestFrame, rms } from '../../audio/quietest-frame.js'
import { Resampler, resample } from '../../audio/resampler.js'
import { wavHeader } from '../../audio/wav.js'
import { type SttOpenAiCompatibleOptions, transcriptionPrompt } from '../../options/openai-compatible-options.js'
import { AsyncQueue } from '../../runtime/async-queue.js'
import { BoundedSlots } from '../../runtime/bounded-slots.js'
import { type PipelineLogger, silentLogger } from '../../runtime/logger.js'
import { VendorErrorCode } from '../socket/vendor-errors.js'
import { SegmentSamples } from './openai-segment-samples.js'
import type { Transcription } from './openai-transcription-codec.js'
import { requestTranscription, TranscriptionError } from './openai-transcription-request.js'
import type { SttEvent, SttStream, SttStreamOptions, SttWord } from './stt-stream.js'

const LABEL = 'stt.openai_compatible'
/** Requests of one call in flight at once; a long segment never holds up the next beyond this. */
const MAX_IN_FLIGHT = 4
/** Segments waiting for a request slot; one more fails at once with an error (the server is far behind). */
const MAX_WAITING = 16
/** A segment quieter than this (RMS of PCM16) is not worth a request: nothing was said. */
const SILENCE_RMS = 60
/** Segments shorter than this (ms) are not sent: no word is that short. */
const MIN_SEGMENT_MS = 100
/** A 413 halves the segment at its quietest frame, at most this many times. */
const MAX_SPLITS = 3

/** One piece of caller audio to transcribe, where it starts in the stream's audio, and whether it ends the turn. */
interface Segment {
  samples: Int16Array
  startSeconds: number
  endsTurn: boolean
  /** The samples already at the request's rate (resampled as they came), when they are all there. */
  wire?: Int16Array | undefined
  /** Their RMS when it was measured as they came. */
  rms?: number
}

/**
 * `stt.openai_compatible` in `segments` mode: the caller's speech between the VAD's start and end (what reaches STT
 * with `vad.gate_audio`, its lead-in included) is posted as one WAV file to `{base}/audio/transcriptions` when the
 * VAD says speech ended (`finalize`). Requests run concurrently (bounded, each time-limited) and their results are
 * yielded in the order the segments were spoken: a `final` (with word timings from `verbose_json`, in seconds of the
 * stream's audio) and an `end_of_turn`. A segment longer than `max_segment_seconds` is cut at its quietest frame and
 * its first part sent at once; a 413 splits it again. A failed request is an `error` event naming the cause (a
 * refused key is fatal), then an empty `end_of_turn`, so the turn never waits on it.
 */
export class OpenAiSegmentsSttStream implements SttStream {
  readonly #o: SttOpenAiCompatibleOptions
  readonly #endpoint: SttStreamOptions['endpoint']
  readonly #format: AudioFormat
  readonly #rate: number
  /** Ask for word timings (`verbose_json`); dropped for good when the server refuses them. */
  #words: boolean
  readonly #logger: PipelineLogger
  readonly #queue = new AsyncQueue<SttEvent>({ capacity: 512, isDroppable: (e) => e.type === 'interim' })
  readonly #abort = new AbortController()
  readonly #samples = new SegmentSamples()
  /**
   * The segment at the request's rate, resampled as it arrives so the end of speech does not wait for it (8 s of
   * speech took ~40 ms to resample at once); #wireValid is false after a cut, when the rest is resampled at once.
   */
  readonly #resampler: Resampler | undefined
  readonly #wire = new SegmentSamples()
  #wireValid = true
  #segmentStart = 0
  #pushed = 0
  readonly #slots = new BoundedSlots(MAX_IN_FLIGHT, MAX_WAITING)
  /** Results are yielded in segment order: each segment's emit waits for the one before. */
  #tail: Promise<void> = Promise.resolve()
  #closed = false

  constructor(options: SttOpenAiCompatibleOptions, stream: SttStreamOptions) {
    this.#o = options
    this.#endpoint = stream.endpoint
    this.#format = stream.format
    this.#rate = AUDIO_FORMATS[stream.format].sampleRate
    this.#words = stream.wantWords ?? true
    this.#logger = stream.logger ?? silentLogger
    if (options.sample_rate !== this.#rate) this.#resampler = new Resampler({ from: this.#rate, to: options.sample_rate })
    stream.signal?.addEventListener('abort', () => this.#shutdown(), { once: true })
    if (stream.signal?.aborted) this.#shutdown()
  }

  get closed(): boolean {
    return this.#closed
  }

  pushAudio(chunk: Buffer): void {
    if (this.#closed || chunk.length === 0) return
    const samples = this.#format === 'ulaw_8000' ? decodeMulaw(chunk) : bufferToInt16(chunk)
    if (this.#samples.length === 0) this.#segmentStart = this.#pushed
    this.#pushed += samples.length
    this.#samples.push(samples)
    if (this.#resampler !== undefined && this.#wireValid) this.#wire.push(this.#resampler.processInt16(samples))
    const max = this.#o.max_segment_seconds * this.#rate
    if (this.#samples.length >= max) this.#cutLong(max)
  }

  finalize(): void {
    if (this.#closed) return
    this.#send(this.#take(), true)
  }

  /** The segment has grown past the bound: its part up to the quietest frame of its second half goes now. */
  #cutLong(max: number): void {
    const all = this.#take()
    const cut = quietestFrame(all.samples, Math.floor(max / 2), max, this.#rate / 50)
    this.#send({ samples: all.samples.subarray(0, cut), startSeconds: all.startSeconds }, false)
    const rest = all.samples.subarray(cut)
    this.#samples.push(rest)
    this.#wireValid = false
    this.#segmentStart = this.#pushed - rest.length
  }

  /** Removes the current segment's audio and returns it (with its resampled form when that is whole). */
  #take(): Omit<Segment, 'endsTurn'> {
    const { samples, rms } = this.#samples.take()
    const startSeconds = this.#segmentStart / this.#rate
    let wire: Int16Array | undefined
    if (this.#resampler !== undefined) {
      if (this.#wireValid) {
        this.#wire.push(this.#resampler.flushInt16())
        wire = this.#wire.take().samples
      } else {
        this.#resampler.reset()
        this.#wire.take()
      }
    }
    this.#wireValid = true
    return { samples, startSeconds, wire, rms }
  }

  #send(part: Omit<Segment, 'endsTurn'>, endsTurn: boolean): void {
    const segment: Segment = { ...part, endsTurn }
    const silent = segment.samples.length < (this.#rate * MIN_SEGMENT_MS) / 1000 || (segment.rms ?? rms(segment.samples)) < SILENCE_RMS
    const job: Promise<Transcription | undefined> = silent ? Promise.resolve({ text: '' }) : this.#transcribe(segment)
    this.#tail = this.#tail
      .then(async () => {
        const result = await job
        if (this.#queue.ended) return
        if (result !== undefined && result.text !== '') {
          const words = result.words?.map((w) => shift(w, segment.startSeconds))
          this.#queue.push({ type: 'final', text: result.text, ...(words !== undefined && { words }) })
        }
        if (segment.endsTurn) this.#queue.push({ type: 'end_of_turn', text: result?.text ?? '' })
      })
      .catch((error: unknown) => this.#logger.error({ stream: LABEL, err: error }, 'transcription result lost'))
  }

  /** The segment's transcription, or undefined after a failure (reported as an error event). */
  async #transcribe(segment: Segment, depth = 0): Promise<Transcription | undefined> {
    try {
      if (!(await this.#slots.acquire(this.#abort.signal))) {
        throw new TranscriptionError(VendorErrorCode.Timeout, 'too many segments wait for the server')
      }
    } catch (error) {
      this.#failed(error)
      return undefined
    }
    let result: Transcription
    try {
      result = await this.#request(segment)
    } catch (error) {
      this.#slots.release()
      if (error instanceof TranscriptionError && error.code === VendorErrorCode.TooLarge && depth < MAX_SPLITS) {
        return this.#splitAndRetry(segment, depth)
      }
      this.#failed(error)
      return undefined
    }
    this.#slots.release()
    return result
  }

  async #request(segment: Segment): Promise<Transcription> {
    const rate = this.#o.sample_rate
    const audio = rate === this.#rate ? segment.samples : (segment.wire ?? resample(segment.samples, this.#rate, rate))
    const pcm = int16ToBuffer(audio)
    const wav = [wavHeader(pcm.length, rate), pcm]
    const ask = (words: boolean) =>
      requestTranscription({
        baseUrl: this.#endpoint.url,
        apiKey: this.#endpoint.apiKey,
        wav,
        model: this.#o.model,
        language: this.#o.language,
        prompt: transcriptionPrompt(this.#o),
        temperature: this.#o.temperature,
        words,
        stream: this.#o.stream,
        onDelta: (text) => {
          if (text !== '') this.#queue.push({ type: 'interim', text })
        },
        timeoutMs: this.#o.timeout_ms,
        signal: this.#abort.signal,
      })
    let result: Transcription
    const words = this.#words
    try {
      result = await ask(words)
    } catch (error) {
      // A server (or model) without verbose_json refuses it with a 400: plain json from then on, the words given up.
      // Only when plain json then works: whisper-server answers every unreadable request with the same bare 400.
      if (!(words && !this.#o.stream && error instanceof TranscriptionError && error.status === 400)) throw error
      result = await ask(false)
      if (this.#words) this.#logger.warn({ stream: LABEL }, `verbose_json refused (${error.message}): asking for json from now on`)
      this.#words = false
    }
    if (result.text === '') {
      this.#error(VendorErrorCode.EmptyTranscript, 'the server heard speech but returned no text', false)
    }
    return result
  }

  /** HTTP 413: the halves (cut at the quietest frame of the middle half) are transcribed one after the other. */
  async #splitAndRetry(segment: Segment, depth: number): Promise<Transcription | undefined> {
    const n = segment.samples.length
    const cut = quietestFrame(segment.samples, Math.floor(n / 4), Math.floor((3 * n) / 4), this.#rate / 50)
    const first = { samples: segment.samples.subarray(0, cut), startSeconds: segment.startSeconds, endsTurn: false }
    const second = { samples: segment.samples.subarray(cut), startSeconds: segment.startSeconds + cut / this.#rate, endsTurn: false }
    const a = await this.#transcribe(first, depth + 1)
    const b = await this.#transcribe(second, depth + 1)
    if (a === undefined || b === undefined) return undefined
    const words = [...(a.words ?? []), ...(b.words ?? []).map((w) => shift(w, cut / this.#rate))]
    return { text: [a.text, b.text].filter(Boolean).join(' '), ...(words.length > 0 && { words }) }
  }

  #failed(error: unknown): void {
    if (this.#abort.signal.aborted) return
    if (error instanceof TranscriptionError) {
      this.#error(error.code, error.message, error.code === VendorErrorCode.AuthFailed, error.status)
      if (error.code === VendorErrorCode.AuthFailed) this.#shutdown()
    } else this.#error(VendorErrorCode.ServerError, `request failed: ${(error as Error).message}`, false)
  }

  #error(code: (typeof VendorErrorCode)[keyof typeof VendorErrorCode], message: string, fatal: boolean, vendorCode?: number): void {
    this.#logger.warn({ stream: LABEL, code }, message)
    this.#queue.push({
      type: 'error',
      code,
      message: `${LABEL}: ${message}`,
      fatal,
      ...(vendorCode !== undefined && { vendorCode }),
      ...(!fatal && code !== VendorErrorCode.EmptyTranscript && { turnFailed: true }),
    })
  }

  /** Sends the segment in progress, waits (at most `closeTimeoutMs`, default 3 s) for the answers, then ends. */
  async close(): Promise<void> {
    if (this.#closed) return
    if (this.#samples.length > 0) this.finalize()
    this.#closed = true
    const timer = setTimeout(() => this.#abort.abort(), 3000)
    timer.unref()
    await this.#tail
    clearTimeout(timer)
    this.#shutdown()
  }

  #shutdown(): void {
    this.#closed = true
    this.#abort.abort()
    this.#queue.end()
  }

  [Symbol.asyncIterator](): AsyncIterator<SttEvent, undefined> {
    return this.#queue[Symbol.asyncIterator]()
  }
}

function shift(word: SttWord, seconds: number): SttWord {
  return { word: word.word, start: word.start + seconds, end: word.end + seconds }
}
