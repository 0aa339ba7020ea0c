/** Design knobs for the windowed-sinc anti-aliasing filter. */
export interface SincFilterOptions {
  /** Zero crossings of the sinc kept on each side (filter half-length); more = sharper transition. Default 24. */
  zeroCrossings?: number
  /** Cutoff (-6 dB) as a fraction of the lower rate's Nyquist frequency. Default 0.9. */
  rolloff?: number
  /** Kaiser window beta; 7.86 gives about 80 dB stopband. Default 7.86. */
  beta?: number
}

/** A polyphase windowed-sinc filter bank for converting `from` Hz to `to` Hz (ratio up/down, reduced). */
export interface PolyphaseFilter {
  readonly up: number
  readonly down: number
  /** Taps per phase (input samples each output sample reads). Always even. */
  readonly taps: number
  /** `up * taps` coefficients, phase-major: phase p uses `coefs[p * taps .. p * taps + taps)`. */
  readonly coefs: Float32Array
}

/** Default filter design: ~80 dB stopband, flat passband to ~0.8 of the lower Nyquist. */
export const DEFAULT_SINC_FILTER: Required<SincFilterOptions> = { zeroCrossings: 24, rolloff: 0.9, beta: 7.86 }

const MAX_COEFS = 1 << 20
const cache = new Map<string, PolyphaseFilter>()

/** Greatest common divisor of two positive integers. */
export function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b]
  return a
}

/**
 * Build (or fetch from a process-wide cache) the polyphase filter for `from` -> `to`.
 * Coefficient tables are shared by every resampler with the same rates and options.
 */
export function polyphaseFilter(from: number, to: number, options: SincFilterOptions = {}): PolyphaseFilter {
  if (!Number.isInteger(from) || !Number.isInteger(to) || from <= 0 || to <= 0) {
    throw new RangeError(`sample rates must be positive integers, got ${from} -> ${to}`)
  }
  const o = { ...DEFAULT_SINC_FILTER, ...options }
  const key = `${from}:${to}:${o.zeroCrossings}:${o.rolloff}:${o.beta}`
  const hit = cache.get(key)
  if (hit !== undefined) return hit

  const g = gcd(from, to)
  const up = to / g
  const down = from / g
  // Cutoff relative to the input rate, in cycles per input sample (0.5 = input Nyquist).
  const fc = (o.rolloff * Math.min(from, to)) / 2 / from
  // Half-length in input samples holding `zeroCrossings` zero crossings of sinc(2 fc x).
  const half = Math.ceil(o.zeroCrossings / (2 * fc))
  const taps = 2 * half
  if (up * taps > MAX_COEFS) throw new RangeError(`resampling ratio ${from}:${to} needs too large a filter`)
  const coefs = new Float32Array(up * taps)
  const delay = half - 1
  const i0beta = besselI0(o.beta)
  for (let p = 0; p < up; p++) {
    let sum = 0
    for (let k = 0; k < taps; k++) {
      const x = k - delay - p / up
      const r = x / half
      const w = r * r >= 1 ? 0 : besselI0(o.beta * Math.sqrt(1 - r * r)) / i0beta
      const v = 2 * fc * sinc(2 * fc * x) * w
      coefs[p * taps + k] = v
      sum += v
    }
    // Unity DC gain per phase removes a small periodic gain ripple between phases.
    for (let j = p * taps; j < (p + 1) * taps; j++) coefs[j] = coefs[j]! / sum
  }
  const filter: PolyphaseFilter = { up, down, taps, coefs }
  cache.set(key, filter)
  return filter
}

function sinc(x: number): number {
  if (x === 0) return 1
  const px = Math.PI * x
  return Math.sin(px) / px
}

function besselI0(x: number): number {
  let sum = 1
  let term = 1
  const q = (x * x) / 4
  for (let k = 1; k < 64; k++) {
    term *= q / (k * k)
    sum += term
    if (term < sum * 1e-12) break
  }
  return sum
}
