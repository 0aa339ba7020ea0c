/**
 * One direction of the warm transfer's bridge: audio in one leg's format in, 20 ms frames in the other leg's format
 * out, as soon as a whole frame exists. Pure (no I/O, no timers); the pipeline's G.711 codec and streaming resampler
 * do the work.
 *
 * No added buffering: the resampler is primed with its own lookahead of zeros, so each whole 20 ms frame in gives a
 * whole 20 ms frame out at once (the resampler's lookahead, 27 input samples at 8 kHz, is the only delay, and it is
 * audio delay, not waiting). Input cut into other sizes is re-cut: at most one frame's worth waits for the rest.
 */
import { AUDIO_FORMATS, type AudioFormat, decodeMulaw, encodeMulaw, Resampler } from '../../pipeline/index.js'

/** Length of every frame out. */
export const BRIDGE_FRAME_MS = 20

/** Bytes of one 20 ms frame in `format`. */
export function frameBytes(format: AudioFormat): number {
  const info = AUDIO_FORMATS[format]
  return (info.sampleRate * BRIDGE_FRAME_MS * info.bytesPerSample) / 1000
}

/** Converts a stream of audio from one format to 20 ms frames of another. */
export interface FrameConverter {
  readonly from: AudioFormat
  readonly to: AudioFormat
  /** Takes the next piece of input; returns the whole frames it completes (often one, sometimes none or several). */
  push(input: Uint8Array): Uint8Array[]
}

/** A converter from `from` to `to`; the same format both ways only re-cuts into 20 ms frames. */
export function createFrameConverter(from: AudioFormat, to: AudioFormat): FrameConverter {
  if (from === to) return new Recutter(from)
  return new Transcoder(from, to)
}

/** Same format: bytes pass through untouched; a 20 ms frame arriving on a frame boundary is passed on as is. */
class Recutter implements FrameConverter {
  readonly from: AudioFormat
  readonly to: AudioFormat
  readonly #frame: number
  readonly #pending: Uint8Array
  #pendingLength = 0

  constructor(format: AudioFormat) {
    this.from = format
    this.to = format
    this.#frame = frameBytes(format)
    this.#pending = new Uint8Array(this.#frame)
  }

  push(input: Uint8Array): Uint8Array[] {
    if (this.#pendingLength === 0 && input.length === this.#frame) return [input]
    const out: Uint8Array[] = []
    let at = 0
    while (at < input.length) {
      const n = Math.min(this.#frame - this.#pendingLength, input.length - at)
      this.#pending.set(input.subarray(at, at + n), this.#pendingLength)
      this.#pendingLength += n
      at += n
      if (this.#pendingLength === this.#frame) {
        out.push(this.#pending.slice())
        this.#pendingLength = 0
      }
    }
    return out
  }
}

/** Decode to PCM16, resample if the rates differ, cut into 20 ms and encode. */
class Transcoder implements FrameConverter {
  readonly from: AudioFormat
  readonly to: AudioFormat
  readonly #resampler: Resampler | undefined
  readonly #frameSamples: number
  readonly #pending: Int16Array
  #pendingLength = 0
  #oddByte: number | undefined

  constructor(from: AudioFormat, to: AudioFormat) {
    this.from = from
    this.to = to
    const inRate = AUDIO_FORMATS[from].sampleRate
    const outRate = AUDIO_FORMATS[to].sampleRate
    if (inRate !== outRate) {
      this.#resampler = new Resampler({ from: inRate, to: outRate })
      this.#resampler.processInt16(new Int16Array(this.#resampler.latencySamples))
    }
    this.#frameSamples = (outRate * BRIDGE_FRAME_MS) / 1000
    this.#pending = new Int16Array(this.#frameSamples)
  }

  push(input: Uint8Array): Uint8Array[] {
    const decoded = this.#decode(input)
    const samples = this.#resampler === undefined ? decoded : this.#resampler.processInt16(decoded)
    const out: Uint8Array[] = []
    let at = 0
    while (at < samples.length) {
      const n = Math.min(this.#frameSamples - this.#pendingLength, samples.length - at)
      this.#pending.set(samples.subarray(at, at + n), this.#pendingLength)
      this.#pendingLength += n
      at += n
      if (this.#pendingLength === this.#frameSamples) {
        out.push(this.#encode(this.#pending))
        this.#pendingLength = 0
      }
    }
    return out
  }

  #decode(input: Uint8Array): Int16Array {
    if (AUDIO_FORMATS[this.from].codec === 'ulaw') return decodeMulaw(input)
    // PCM16 little-endian; a piece may split a sample, whose first byte waits for the next piece.
    let bytes = input
    if (this.#oddByte !== undefined) {
      bytes = new Uint8Array(input.length + 1)
      bytes[0] = this.#oddByte
      bytes.set(input, 1)
      this.#oddByte = undefined
    }
    const count = bytes.length >> 1
    if (bytes.length % 2 === 1) this.#oddByte = bytes[bytes.length - 1]
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    const samples = new Int16Array(count)
    for (let i = 0; i < count; i++) samples[i] = view.getInt16(i * 2, true)
    return samples
  }

  #encode(samples: Int16Array): Uint8Array {
    if (AUDIO_FORMATS[this.to].codec === 'ulaw') return encodeMulaw(samples)
    const out = new Uint8Array(samples.length * 2)
    const view = new DataView(out.buffer)
    for (let i = 0; i < samples.length; i++) view.setInt16(i * 2, samples[i]!, true)
    return out
  }
}
