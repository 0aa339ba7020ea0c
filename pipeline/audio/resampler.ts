import { PCM16_SCALE } from './pcm16.js'
import { polyphaseFilter, type PolyphaseFilter, type SincFilterOptions } from './sinc-filter.js'

/** Sample rates the gateway converts between (any positive integer rates work). */
export const SAMPLE_RATES = [8000, 16000, 22050, 24000] as const

/** Options of a streaming resampler. */
export interface ResamplerOptions extends SincFilterOptions {
  from: number
  to: number
}

/**
 * Streaming polyphase windowed-sinc resampler (anti-aliased both ways), state carried between chunks.
 * Output sample n sits exactly at input time n * from / to (no group delay in timestamps); the price is a
 * lookahead latency of `latencySamples` input samples, released by `flush()` at the end of the stream.
 * Returned arrays are views into buffers reused by the next call: copy them to keep them.
 */
export class Resampler {
  readonly from: number
  readonly to: number
  /** Input samples of lookahead: output lags input by this much until `flush()`. */
  readonly latencySamples: number
  readonly #filter: PolyphaseFilter
  #hist: Float32Array
  #histLen: number
  #pos = 0
  #phase = 0
  #totalIn = 0
  #totalOut = 0
  #out = new Float32Array(0)
  #out16 = new Int16Array(0)

  constructor(options: ResamplerOptions) {
    this.from = options.from
    this.to = options.to
    this.#filter = polyphaseFilter(options.from, options.to, options)
    this.latencySamples = this.#filter.taps / 2
    this.#hist = new Float32Array(this.#filter.taps * 4)
    this.#histLen = this.#filter.taps / 2 - 1
  }

  /** Resample a chunk of float samples; returns the outputs now available (a reused view). */
  process(input: Float32Array | Int16Array): Float32Array {
    if (input instanceof Int16Array) this.#appendInt16(input)
    else this.#appendFloat(input)
    return this.#run(Infinity)
  }

  /** Resample a chunk of PCM16 samples; returns PCM16 outputs now available (a reused view). */
  processInt16(input: Int16Array): Int16Array {
    this.#appendInt16(input)
    return this.#toInt16(this.#run(Infinity))
  }

  /** End of stream: emit the outputs still held back by the lookahead, then reset for a new stream. */
  flush(): Float32Array {
    const wanted = Math.ceil((this.#totalIn * this.#filter.up) / this.#filter.down) - this.#totalOut
    this.#appendFloat(new Float32Array(this.#filter.taps))
    const out = this.#run(Math.max(0, wanted))
    this.reset()
    return out
  }

  /** `flush()` as PCM16. */
  flushInt16(): Int16Array {
    return this.#toInt16(this.flush())
  }

  /** Forget all state (history, position) as if newly constructed. */
  reset(): void {
    this.#hist.fill(0)
    this.#histLen = this.#filter.taps / 2 - 1
    this.#pos = 0
    this.#phase = 0
    this.#totalIn = 0
    this.#totalOut = 0
  }

  #reserve(n: number): number {
    const need = this.#histLen + n
    if (need > this.#hist.length) {
      const grown = new Float32Array(Math.max(need, this.#hist.length * 2))
      grown.set(this.#hist.subarray(0, this.#histLen))
      this.#hist = grown
    }
    const base = this.#histLen
    this.#histLen = need
    this.#totalIn += n
    return base
  }

  #appendFloat(input: Float32Array): void {
    const base = this.#reserve(input.length)
    this.#hist.set(input, base)
  }

  // Separate from appendFloat so each loop stays monomorphic.
  #appendInt16(input: Int16Array): void {
    const base = this.#reserve(input.length)
    const h = this.#hist
    const inv = 1 / PCM16_SCALE
    for (let i = 0; i < input.length; i++) h[base + i] = input[i]! * inv
  }

  #run(limit: number): Float32Array {
    const { up, down, taps, coefs } = this.#filter
    const h = this.#hist
    const avail = this.#histLen - taps
    // Upper bound on outputs this call can produce.
    const max = Math.max(0, Math.floor(((avail - this.#pos + 1) * up - this.#phase) / down) + 1)
    if (this.#out.length < max) this.#out = new Float32Array(max + 64)
    const out = this.#out
    let n = 0
    let i = this.#pos
    let p = this.#phase
    while (i <= avail && n < limit) {
      const base = p * taps
      let acc = 0
      for (let k = 0; k < taps; k++) acc += coefs[base + k]! * h[i + k]!
      out[n++] = acc
      p += down
      if (p >= up) {
        const q = (p / up) | 0
        i += q
        p -= q * up
      }
    }
    // Keep only the history the next output needs.
    const keep = Math.min(i, this.#histLen)
    h.copyWithin(0, keep, this.#histLen)
    this.#histLen -= keep
    this.#pos = i - keep
    this.#phase = p
    this.#totalOut += n
    return out.subarray(0, n)
  }

  #toInt16(src: Float32Array): Int16Array {
    if (this.#out16.length < src.length) this.#out16 = new Int16Array(src.length + 64)
    const o = this.#out16
    for (let i = 0; i < src.length; i++) {
      const v = Math.round(src[i]! * PCM16_SCALE)
      o[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v
    }
    return o.subarray(0, src.length)
  }
}

/** One-shot resample of a whole signal; output length is ceil(n * to / from), time-aligned with the input. */
export function resample<T extends Int16Array | Float32Array>(input: T, from: number, to: number, options: SincFilterOptions = {}): T {
  if (from === to) return input.slice() as T
  const r = new Resampler({ ...options, from, to })
  const head = r.process(input)
  const total = Math.ceil((input.length * to) / from)
  const f = new Float32Array(total)
  f.set(head.subarray(0, total))
  const tail = r.flush()
  f.set(tail.subarray(0, total - Math.min(head.length, total)), Math.min(head.length, total))
  if (input instanceof Float32Array) return f as T
  const out = new Int16Array(total)
  for (let i = 0; i < total; i++) {
    const v = Math.round(f[i]! * PCM16_SCALE)
    out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v
  }
  return out as T
}
