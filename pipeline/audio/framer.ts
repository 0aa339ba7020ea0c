/** Sample arrays the framer can cut. */
export type SampleArray = Int16Array | Float32Array

/** 20 ms carrier frame at 8 kHz. */
export const CARRIER_FRAME_SAMPLES_8K = 160
/** 32 ms Silero VAD frame at 8 kHz (512 samples at 16 kHz). */
export const VAD_FRAME_SAMPLES_8K = 256

/**
 * Cuts a stream of arbitrary-sized chunks into fixed-size frames, carrying leftovers between pushes.
 * Frames handed to the callback are views (into the chunk when aligned, else into one reused buffer):
 * they are valid only during the callback; copy them to keep them.
 */
export class Framer<T extends SampleArray = Int16Array> {
  readonly frameSize: number
  readonly #buf: T
  #fill = 0
  #emitted = 0

  constructor(frameSize: number, make: (n: number) => T = (n) => new Int16Array(n) as T) {
    if (!Number.isInteger(frameSize) || frameSize < 1) throw new RangeError(`bad frame size ${frameSize}`)
    this.frameSize = frameSize
    this.#buf = make(frameSize)
  }

  /** Samples waiting for the next frame. */
  get pendingSamples(): number {
    return this.#fill
  }

  /** Frames emitted since construction or the last reset. */
  get framesEmitted(): number {
    return this.#emitted
  }

  /** Append a chunk; calls `onFrame` once per completed frame, in order. Returns the number of frames emitted. */
  push(chunk: T, onFrame: (frame: T, index: number) => void): number {
    const size = this.frameSize
    const buf = this.#buf
    const n = chunk.length
    let off = 0
    let count = 0
    // Copies are set(), with a view only for part of a chunk: this runs per 20 ms frame per call, and a native copy
    // of 160 samples, view included, took 0.26 us against 0.6-1.0 for an index loop (micro-benchmark).
    if (this.#fill > 0) {
      const take = Math.min(size - this.#fill, n)
      buf.set(take === n ? chunk : chunk.subarray(0, take), this.#fill)
      this.#fill += take
      off = take
      if (this.#fill < size) return 0
      this.#fill = 0
      onFrame(buf, this.#emitted++)
      count++
    }
    while (n - off >= size) {
      onFrame(chunk.subarray(off, off + size) as T, this.#emitted++)
      off += size
      count++
    }
    if (off < n) buf.set(off === 0 ? chunk : chunk.subarray(off), 0)
    this.#fill = n - off
    return count
  }

  /** Emit the leftover as one zero-padded frame (if any) and empty the framer. Returns frames emitted (0 or 1). */
  flush(onFrame: (frame: T, index: number) => void): number {
    if (this.#fill === 0) return 0
    this.#buf.fill(0, this.#fill)
    this.#fill = 0
    onFrame(this.#buf, this.#emitted++)
    return 1
  }

  /** Drop any leftover and restart frame numbering. */
  reset(): void {
    this.#fill = 0
    this.#emitted = 0
  }
}
