import { decodeAlaw } from './g711-alaw.js'
import { decodeMulaw } from './g711-mulaw.js'
import { bufferToInt16, int16ToBuffer } from './pcm16.js'

/** PCM16 audio as stored in a WAV file; `samples` are interleaved when `channels` > 1. */
export interface WavAudio {
  sampleRate: number
  channels: number
  samples: Int16Array
}

/** Thrown for input that is not a WAV file this reader understands; `code` is stable. */
export class WavFormatError extends Error {
  readonly code = 'invalid_wav'
  constructor(message: string) {
    super(message)
    this.name = 'WavFormatError'
  }
}

const FORMAT_PCM = 1
const FORMAT_ALAW = 6
const FORMAT_MULAW = 7
const FORMAT_EXTENSIBLE = 0xfffe
const HEADER_BYTES = 44

/**
 * Parse a RIFF/WAVE file holding PCM16 (or 8-bit G.711 A-law / mu-law, decoded to PCM16).
 * Unknown chunks (LIST, fact, cue, ...) are skipped; a data size larger than the file (streamed writers leave
 * 0 or 0xFFFFFFFF) is clamped to the bytes present.
 */
export function readWav(bytes: Uint8Array): WavAudio {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.byteLength < 12 || tag(bytes, 0) !== 'RIFF' || tag(bytes, 8) !== 'WAVE') {
    throw new WavFormatError('not a RIFF/WAVE file')
  }
  let format = -1
  let channels = 0
  let sampleRate = 0
  let bits = 0
  let data: Uint8Array | undefined
  let off = 12
  while (off + 8 <= bytes.byteLength) {
    const id = tag(bytes, off)
    const size = view.getUint32(off + 4, true)
    const body = off + 8
    const end = Math.min(body + size, bytes.byteLength)
    if (id === 'fmt ') {
      if (end - body < 16) throw new WavFormatError('fmt chunk too short')
      format = view.getUint16(body, true)
      channels = view.getUint16(body + 2, true)
      sampleRate = view.getUint32(body + 4, true)
      bits = view.getUint16(body + 14, true)
      if (format === FORMAT_EXTENSIBLE && end - body >= 26) format = view.getUint16(body + 24, true)
    } else if (id === 'data') {
      data = bytes.subarray(body, end)
      if (format !== -1) break
    }
    off = body + size + (size & 1)
  }
  if (format === -1) throw new WavFormatError('missing fmt chunk')
  if (data === undefined) throw new WavFormatError('missing data chunk')
  if (channels < 1 || sampleRate < 1) throw new WavFormatError(`bad fmt: ${channels} channels, ${sampleRate} Hz`)
  let samples: Int16Array
  if (format === FORMAT_PCM && bits === 16) {
    const whole = data.byteLength - (data.byteLength % (2 * channels))
    samples = bufferToInt16(data.subarray(0, whole)).slice()
  } else if ((format === FORMAT_MULAW || format === FORMAT_ALAW) && bits === 8) {
    const whole = data.subarray(0, data.byteLength - (data.byteLength % channels))
    samples = format === FORMAT_MULAW ? decodeMulaw(whole) : decodeAlaw(whole)
  } else {
    throw new WavFormatError(`unsupported WAV encoding: format ${format}, ${bits} bits`)
  }
  return { sampleRate, channels, samples }
}

/** A 44-byte canonical PCM16 WAV header for `dataBytes` of audio (use for streamed recordings). */
export function wavHeader(dataBytes: number, sampleRate: number, channels = 1): Buffer {
  const h = Buffer.alloc(HEADER_BYTES)
  h.write('RIFF', 0, 'latin1')
  h.writeUInt32LE(Math.min(0xffffffff, 36 + dataBytes), 4)
  h.write('WAVE', 8, 'latin1')
  h.write('fmt ', 12, 'latin1')
  h.writeUInt32LE(16, 16)
  h.writeUInt16LE(FORMAT_PCM, 20)
  h.writeUInt16LE(channels, 22)
  h.writeUInt32LE(sampleRate, 24)
  h.writeUInt32LE(sampleRate * channels * 2, 28)
  h.writeUInt16LE(channels * 2, 32)
  h.writeUInt16LE(16, 34)
  h.write('data', 36, 'latin1')
  h.writeUInt32LE(Math.min(0xffffffff, dataBytes), 40)
  return h
}

/** Serialise PCM16 audio (interleaved when stereo) as a canonical WAV file. */
export function writeWav(audio: WavAudio): Buffer {
  const { sampleRate, channels, samples } = audio
  if (!Number.isInteger(channels) || channels < 1) throw new RangeError(`bad channel count ${channels}`)
  if (samples.length % channels !== 0) throw new RangeError('sample count is not a multiple of channels')
  return Buffer.concat([wavHeader(samples.byteLength, sampleRate, channels), int16ToBuffer(samples)])
}

function tag(bytes: Uint8Array, off: number): string {
  return String.fromCharCode(bytes[off]!, bytes[off + 1]!, bytes[off + 2]!, bytes[off + 3]!)
}
