import type { InputAudioFormat } from '../audio/audio-format.js'
import { decodeMulaw, encodeMulaw } from '../audio/g711-mulaw.js'
import { bufferToInt16 } from '../audio/pcm16.js'
import type { VadConfig } from '../config/vad-schema.js'
import type { SttStream, SttWord } from '../vendors/stt/stt-stream.js'
import { OffsetMap } from '../vendors/stt/offset-map.js'
import type { PipelineLogger } from '../runtime/logger.js'
import { VadStream } from '../vad/vad-stream.js'
import type { VadEvent } from '../vad/vad-events.js'

/** Both caller audio formats are 8 kHz. */
const INPUT_RATE = 8000

/**
 * Caller mu-law bytes kept for VAD-gated STT audio, in samples (a power of two). The VAD hands audio back from at
 * most its queued frames (64) plus its lead-in (10) and the frame itself behind what was pushed: 75 x 256 samples.
 */
const WIRE_RING = 32768

/** The part of a VAD the pipeline uses; tests may inject another. */
export interface VadLike {
  /** `samples` is only valid during the call (the caller reuses it): copy what must be kept. */
  push(samples: Int16Array): void
  close(): void
}

/** Builds a VAD for one call. */
export type VadFactory = (onEvent: (e: VadEvent) => void, options: { gateAudio: boolean; vad: VadConfig }) => VadLike

/** The default VAD: Silero v5 at 8 kHz, batched with every other call of the process. */
export const sileroVad: VadFactory = (onEvent, { gateAudio, vad }) =>
  new VadStream(onEvent, {
    sampleRate: 8000,
    gateAudio,
    bufferFrames: vad.buffer_frames,
    ...(vad.positive_speech_threshold !== undefined && { positiveSpeechThreshold: vad.positive_speech_threshold }),
    ...(vad.negative_speech_threshold !== undefined && { negativeSpeechThreshold: vad.negative_speech_threshold }),
    ...(vad.redemption_frames !== undefined && { redemptionFrames: vad.redemption_frames }),
    ...(vad.min_speech_frames !== undefined && { minSpeechFrames: vad.min_speech_frames }),
    ...(vad.pre_speech_pad_frames !== undefined && { preSpeechPadFrames: vad.pre_speech_pad_frames }),
    frameEvents: false,
  })

/** What CallerAudio needs. */
export interface CallerAudioOptions {
  format: InputAudioFormat
  vad: VadConfig
  /** False in push-to-talk mode: the button, not the VAD, delimits turns. */
  useVad: boolean
  stt: SttStream | undefined
  createVad?: VadFactory | undefined
  logger: PipelineLogger
  /** Push-to-talk override of what reaches STT: true/false while it decides, undefined to follow the VAD gate. */
  sendToStt: () => boolean | undefined
  onSpeechStart(): void
  onSpeechEnd(): void
  onMisfire(): void
}

/**
 * The caller's audio: decoded once for the VAD (8 kHz PCM16), and handed to STT in the wire's own encoding
 * (mu-law stays mu-law). With `vad.gate_audio` only speech (plus `buffer_frames` of lead-in) reaches STT.
 */
export class CallerAudio {
  readonly #o: CallerAudioOptions
  #vad: VadLike | undefined
  #gate: boolean
  /** mu-law decoded for the VAD, reused for every chunk (a 20 ms frame arrives 50 times a second per call). */
  #pcm = new Int16Array(160)
  /**
   * mu-law callers with a VAD gate: the bytes pushed to the VAD, by VAD sample modulo WIRE_RING, so the audio the
   * gate lets through goes to STT as it came instead of decoded and encoded again.
   */
  #wire: Uint8Array | undefined
  /** Samples pushed to the VAD so far: the clock of its `audio` events. */
  #vadSamples = 0
  /** Caller samples pushed so far (both input formats are 8 kHz): the caller's clock. */
  #callerSamples = 0
  /** Samples sent to STT so far, and where each stretch of them was in the caller's audio (VAD gating). */
  #sttSamples = 0
  readonly #sttMap = new OffsetMap()

  constructor(o: CallerAudioOptions) {
    this.#o = o
    const vadOn = o.useVad && o.vad.enabled
    this.#gate = vadOn && o.vad.gate_audio
    if (vadOn) {
      try {
        this.#vad = (o.createVad ?? sileroVad)((e) => this.#onVad(e), { gateAudio: this.#gate, vad: o.vad })
        if (this.#gate && o.format === 'ulaw_8000') this.#wire = new Uint8Array(WIRE_RING)
      } catch (err) {
        o.logger.error({ err }, 'VAD could not start: audio goes to speech recognition ungated')
        this.#gate = false
      }
    }
  }

  /** One chunk of caller audio in the transport's format. */
  push(chunk: Buffer): void {
    const at = this.#callerSamples
    this.#callerSamples += this.#samplesIn(chunk)
    const ptt = this.#o.sendToStt()
    if (ptt !== undefined) {
      if (ptt) this.#toStt(chunk, at)
      return
    }
    if (!this.#gate) this.#toStt(chunk, at)
    if (this.#vad !== undefined) {
      if (this.#o.format === 'ulaw_8000') {
        // Exactly the chunk's size, so the decode returns the array itself and not a view (an object per frame).
        if (this.#pcm.length !== chunk.length) this.#pcm = new Int16Array(chunk.length)
        // Kept before the push: the VAD may hand audio back during it (frames it skips when behind).
        if (this.#wire !== undefined) this.#keepWire(chunk)
        this.#vadSamples += chunk.length
        this.#vad.push(decodeMulaw(chunk, this.#pcm))
      } else if (chunk.length % 2 === 0) {
        this.#vadSamples += chunk.length / 2
        this.#vad.push(bufferToInt16(chunk))
      }
    }
  }

  #onVad(e: VadEvent): void {
    switch (e.type) {
      case 'speech_start':
        this.#o.onSpeechStart()
        break
      case 'speech_end':
        this.#o.onSpeechEnd()
        break
      case 'misfire':
        this.#o.onMisfire()
        break
      case 'audio':
        // The view is only valid during the callback: take the caller's own bytes (mu-law) or copy (PCM16) it now.
        // allocUnsafe of a small size is a slice of Node's pool: one object, no new memory block per frame.
        if (this.#o.format === 'ulaw_8000') {
          const out = Buffer.allocUnsafe(e.samples.length)
          if (!this.#wireBytes(e.startSample, out)) encodeMulaw(e.samples, out)
          this.#toStt(out, e.startSample)
        } else {
          const bytes = e.samples.buffer.slice(e.samples.byteOffset, e.samples.byteOffset + e.samples.byteLength)
          this.#toStt(Buffer.from(bytes), e.startSample)
        }
        break
      case 'error':
        this.#o.logger.error({ err: e.error }, 'VAD failed: audio goes to speech recognition ungated')
        this.#vad?.close()
        this.#vad = undefined
        this.#gate = false
        break
      default:
        break
    }
  }

  /** Keeps `chunk` as VAD samples from #vadSamples on (only the ring's worth at the end of a longer chunk). */
  #keepWire(chunk: Buffer): void {
    // TypedArray set(), not Buffer copy(): copy() checks its arguments and makes a view anyway (0.7% of the thread).
    const wire = this.#wire as Uint8Array
    const bytes = chunk.length > WIRE_RING ? chunk.subarray(chunk.length - WIRE_RING) : chunk
    const at = (this.#vadSamples + chunk.length - bytes.length) % WIRE_RING
    if (at + bytes.length <= WIRE_RING) wire.set(bytes, at)
    else {
      const first = WIRE_RING - at
      wire.set(bytes.subarray(0, first), at)
      wire.set(bytes.subarray(first), 0)
    }
  }

  /** Copies the caller's bytes for VAD samples [start, start + out.length) into `out`; false if they are not kept. */
  #wireBytes(start: number, out: Buffer): boolean {
    const wire = this.#wire
    if (wire === undefined || start < 0 || start + out.length > this.#vadSamples || this.#vadSamples - start > WIRE_RING) return false
    // An index loop, not set() on views of the ring: a view is an object per frame, what the collector must clear.
    for (let i = 0, j = start % WIRE_RING; i < out.length; i++, j = (j + 1) & (WIRE_RING - 1)) out[i] = wire[j]!
    return true
  }

  #samplesIn(chunk: Buffer): number {
    return this.#o.format === 'ulaw_8000' ? chunk.length : Math.floor(chunk.length / 2)
  }

  /** Sends caller audio that began at caller sample `callerAt` to STT, noting where it came from. */
  #toStt(chunk: Buffer, callerAt: number): void {
    const stt = this.#o.stt
    if (stt === undefined) return
    const n = this.#samplesIn(chunk)
    this.#sttMap.add(this.#sttSamples, callerAt, n)
    this.#sttSamples += n
    stt.pushAudio(chunk)
  }

  /**
   * STT words (seconds of the audio sent to STT) in seconds of the caller's audio since the pipeline began: VAD
   * gating left out the silences, so the two clocks differ. Words from before anything known are left out.
   */
  callerWords(words: readonly SttWord[]): SttWord[] {
    const out: SttWord[] = []
    for (const w of words) {
      const start = this.#sttMap.map(w.start * INPUT_RATE)
      const end = this.#sttMap.map(w.end * INPUT_RATE)
      if (start !== undefined && end !== undefined) out.push({ word: w.word, start: start / INPUT_RATE, end: end / INPUT_RATE })
    }
    return out
  }

  close(): void {
    this.#vad?.close()
    this.#vad = undefined
  }
}
