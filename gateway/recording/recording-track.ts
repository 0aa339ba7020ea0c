/**
 * One channel of a recording's unflushed audio: a contiguous run of samples from sample `start`, about a second of
 * it, taken as a chunk's PCM (16-bit little-endian, or mu-law as it came) when full, when the run breaks, or when the
 * recorder flushes.
 */
import { endianness } from 'node:os'
import { MAX_CHUNK_SAMPLES } from '../store/recording-chunks.js'
import { takeChunkBuffer } from './chunk-buffers.js'
import type { RecordedAudio } from './recording-port.js'

/** Int16Array samples are in the machine's byte order; chunks store little-endian. */
const LITTLE_ENDIAN = endianness() === 'LE'

export class Track {
  readonly channel: number
  readonly buf: RecordedAudio
  start = 0
  length = 0
  /** End of the furthest sample handed to the sink. */
  writtenEnd = 0
  /** Where the next contiguous sample goes (caller continuity). */
  cursor = 0
  constructor(channel: number, mulaw: boolean) {
    this.channel = channel
    this.buf = mulaw ? new Uint8Array(MAX_CHUNK_SAMPLES) : new Int16Array(MAX_CHUNK_SAMPLES)
  }

  get end(): number {
    return this.start + this.length
  }

  /** Places `samples` at sample `start`; `flush` is called (and must `take`) when the run breaks or the buffer fills. */
  place(samples: RecordedAudio, start: number, flush: () => void): void {
    if (this.length > 0 && start !== this.end) flush()
    if (this.length === 0) this.start = start
    if (samples.length < this.buf.length - this.length) {
      // The usual case, a frame into a buffer with room: no view of it (an allocation per frame per call).
      this.buf.set(samples, this.length)
      this.length += samples.length
      return
    }
    let at = 0
    while (at < samples.length) {
      const n = Math.min(samples.length - at, this.buf.length - this.length)
      this.buf.set(samples.subarray(at, at + n), this.length)
      this.length += n
      at += n
      if (this.length === this.buf.length) flush()
    }
  }

  /** The buffered run as a chunk's samples and PCM, now handed on (the track then starts where it ended). */
  take(): { startSample: number; sampleCount: number; pcm: Buffer } | undefined {
    if (this.length === 0) return undefined
    const pcm = takeChunkBuffer(this.length * this.buf.BYTES_PER_ELEMENT) // every byte of it is set below
    if (this.buf instanceof Uint8Array) {
      pcm.set(this.buf.subarray(0, this.length))
    } else if (LITTLE_ENDIAN) {
      // One copy of the samples' bytes.
      pcm.set(new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.length * 2))
    } else {
      for (let i = 0; i < this.length; i++) pcm.writeInt16LE(this.buf[i] as number, i * 2)
    }
    const chunk = { startSample: this.start, sampleCount: this.length, pcm }
    this.writtenEnd = Math.max(this.writtenEnd, this.end)
    this.start = this.end
    this.length = 0
    return chunk
  }
}
