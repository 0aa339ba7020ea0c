/**
 * The samples of the segment being spoken, gathered into one growing array as they arrive, with their sum of squares
 * kept as they come: at the end of speech the segment is already contiguous and its loudness known, so the request
 * goes out without a pass over the audio (gathering 8 s of 20 ms chunks and measuring it then took ~0.5 ms).
 */
export class SegmentSamples {
  #buffer = new Int16Array(0)
  /** The size the next segment's array starts at: the last one's, so a turn rarely grows it. */
  #capacity: number
  #length = 0
  #sumSquares = 0

  constructor(initialCapacity = 16_000) {
    this.#capacity = initialCapacity
  }

  get length(): number {
    return this.#length
  }

  /** Appends a copy of `samples` (the caller may reuse its array). */
  push(samples: Int16Array): void {
    const need = this.#length + samples.length
    if (need > this.#buffer.length) {
      const grown = new Int16Array(Math.max(need, this.#capacity, this.#buffer.length * 2))
      grown.set(this.#buffer.subarray(0, this.#length))
      this.#buffer = grown
    }
    this.#buffer.set(samples, this.#length)
    this.#length = need
    let sum = 0
    for (let i = 0; i < samples.length; i++) sum += samples[i]! * samples[i]!
    this.#sumSquares += sum
  }

  /** The samples so far and their RMS; the segment is handed over (not copied) and this one starts empty. */
  take(): { samples: Int16Array; rms: number } {
    const samples = this.#buffer.subarray(0, this.#length)
    const rms = this.#length === 0 ? 0 : Math.sqrt(this.#sumSquares / this.#length)
    this.#capacity = Math.max(this.#capacity, this.#buffer.length)
    this.#buffer = new Int16Array(0)
    this.#length = 0
    this.#sumSquares = 0
    return { samples, rms }
  }
}
