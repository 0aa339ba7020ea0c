import { AUDIO_FORMATS, type OutputAudioFormat } from '../../audio/audio-format.js'
import { encodeMulaw } from '../../audio/g711-mulaw.js'
import { int16ToBuffer } from '../../audio/pcm16.js'
import { Resampler } from '../../audio/resampler.js'

/** A WAV header longer than this (odd chunks before `data`) is refused. */
const MAX_HEADER_BYTES = 4096

/**
 * Turns a speech server's streamed answer (raw PCM16 LE at a known rate, or a WAV file whose header names the rate)
 * into the channel's format as it arrives: bytes split mid-sample are carried over, the audio is resampled with
 * state kept between chunks, and `end()` releases the resampler's lookahead. One reader per sentence.
 */
export class PcmStreamReader {
  readonly #out: OutputAudioFormat
  readonly #wav: boolean
  #rate: number | undefined
  #resampler: Resampler | undefined
  #header: Buffer | undefined
  #carry: Buffer | undefined

  /** `rate`: the rate of raw PCM; ignored for `wav`, whose header says it. */
  constructor(format: 'pcm' | 'wav', rate: number, out: OutputAudioFormat) {
    this.#out = out
    this.#wav = format === 'wav'
    if (!this.#wav) this.#setRate(rate)
    else this.#header = Buffer.alloc(0)
  }

  /** Audio in the channel's format for the bytes that came (possibly empty). Throws on a bad WAV header. */
  push(bytes: Buffer): Buffer {
    let data = bytes
    if (this.#header !== undefined) {
      const header = Buffer.concat([this.#header, bytes])
      const parsed = wavData(header)
      if (parsed === undefined) {
        if (header.length > MAX_HEADER_BYTES) throw new Error('the WAV header has no data chunk')
        this.#header = header
        return Buffer.alloc(0)
      }
      this.#header = undefined
      this.#setRate(parsed.rate)
      data = header.subarray(parsed.dataAt)
    }
    if (this.#carry !== undefined) {
      data = Buffer.concat([this.#carry, data])
      this.#carry = undefined
    }
    if (data.length % 2 === 1) {
      this.#carry = Buffer.from(data.subarray(data.length - 1))
      data = data.subarray(0, data.length - 1)
    }
    if (data.length === 0) return Buffer.alloc(0)
    const aligned = Buffer.from(data) // a copy: 2-byte aligned for the Int16Array view
    const samples = new Int16Array(aligned.buffer, aligned.byteOffset, aligned.length / 2)
    return this.#encode(this.#resampler === undefined ? samples : this.#resampler.processInt16(samples))
  }

  /** The end of the sentence's audio: what the resampler still holds. */
  end(): Buffer {
    if (this.#resampler === undefined) return Buffer.alloc(0)
    return this.#encode(this.#resampler.flushInt16())
  }

  #setRate(rate: number): void {
    this.#rate = rate
    const to = AUDIO_FORMATS[this.#out].sampleRate
    this.#resampler = rate === to ? undefined : new Resampler({ from: rate, to })
  }

  #encode(samples: Int16Array): Buffer {
    if (samples.length === 0) return Buffer.alloc(0)
    if (AUDIO_FORMATS[this.#out].codec === 'ulaw') return Buffer.from(encodeMulaw(samples))
    return Buffer.from(int16ToBuffer(samples)) // a copy: the resampler reuses its output
  }
}

/** The sample rate and where the samples start, once the header up to the `data` chunk is in `bytes`. */
function wavData(bytes: Buffer): { rate: number; dataAt: number } | undefined {
  if (bytes.length < 12) return undefined
  if (bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WAVE') throw new Error('not a WAV file')
  let at = 12
  let rate: number | undefined
  while (at + 8 <= bytes.length) {
    const id = bytes.toString('latin1', at, at + 4)
    const size = bytes.readUInt32LE(at + 4)
    if (id === 'data') {
      if (rate === undefined) throw new Error('the WAV data chunk comes before its fmt chunk')
      return { rate, dataAt: at + 8 }
    }
    if (at + 8 + size > bytes.length) return undefined
    if (id === 'fmt ') {
      if (bytes.readUInt16LE(at + 8) !== 1 || bytes.readUInt16LE(at + 22) !== 16 || bytes.readUInt16LE(at + 10) !== 1) {
        throw new Error('only mono 16-bit PCM WAV is supported')
      }
      rate = bytes.readUInt32LE(at + 12)
    }
    at += 8 + size + (size % 2)
  }
  return undefined
}
