/**
 * Streaming downsampler for microphone audio (any AudioContext rate -> 8000 Hz): a windowed-sinc FIR low-pass just
 * under the output Nyquist (3.6 kHz for 8 kHz), evaluated only at the output instants, with linear interpolation
 * between neighbouring filtered samples for non-integer ratios (44.1 kHz). Pure, no DOM.
 */
export class Downsampler {
  readonly inputRate: number
  readonly outputRate: number
  readonly #taps: Float32Array
  readonly #step: number
  #history = new Float32Array(0)
  /** Position of the next output, in input samples relative to the start of `#history`. */
  #position = 0

  constructor(inputRate: number, outputRate = 8000, taps = 63) {
    if (!(inputRate > 0 && outputRate > 0)) throw new RangeError('sample rates must be positive')
    this.inputRate = inputRate
    this.outputRate = outputRate
    this.#step = inputRate / outputRate
    this.#taps = lowPass(taps, (0.45 * Math.min(inputRate, outputRate)) / inputRate)
  }

  /** Filter and decimate a block; returns the output samples now available. */
  process(input: Float32Array): Float32Array {
    const taps = this.#taps
    const n = taps.length
    const buffer = new Float32Array(this.#history.length + input.length)
    buffer.set(this.#history)
    buffer.set(input, this.#history.length)
    // filtered(k) uses buffer[k .. k+n-1]; an output at position p needs k = floor(p) and k + 1.
    const last = buffer.length - n - 1
    const count = last < this.#position ? 0 : Math.floor((last - this.#position) / this.#step) + 1
    const out = new Float32Array(count)
    let p = this.#position
    for (let o = 0; o < count; o++, p += this.#step) {
      const k = Math.floor(p)
      const frac = p - k
      let a = 0
      let b = 0
      for (let j = 0; j < n; j++) {
        a += taps[j]! * buffer[k + j]!
        b += taps[j]! * buffer[k + 1 + j]!
      }
      out[o] = a + (b - a) * frac
    }
    const keepFrom = Math.min(Math.floor(p), buffer.length)
    this.#history = buffer.slice(keepFrom)
    this.#position = p - keepFrom
    return out
  }

  /** Forget buffered input (e.g. between push-to-talk turns). */
  reset(): void {
    this.#history = new Float32Array(0)
    this.#position = 0
  }
}

/** Blackman-windowed sinc low-pass with unit DC gain; `cutoff` is a fraction of the sample rate. */
function lowPass(taps: number, cutoff: number): Float32Array {
  const h = new Float32Array(taps)
  const mid = (taps - 1) / 2
  let sum = 0
  for (let i = 0; i < taps; i++) {
    const x = i - mid
    const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x)
    const w = 0.42 - 0.5 * Math.cos((2 * Math.PI * i) / (taps - 1)) + 0.08 * Math.cos((4 * Math.PI * i) / (taps - 1))
    h[i] = sinc * w
    sum += h[i]!
  }
  for (let i = 0; i < taps; i++) h[i]! /= sum
  return h
}
