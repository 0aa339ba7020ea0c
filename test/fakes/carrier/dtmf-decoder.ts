/**
 * The simulator's keypad-tone receiver: finds DTMF digits and their timing in the audio a phone received, with a
 * bank of Goertzel filters at the eight Q.23 frequencies. Written for the tests, independently of the gateway's
 * tone generator: it only knows the frequency table of the standard.
 */

const LOW = [697, 770, 852, 941] as const
const HIGH = [1209, 1336, 1477, 1633] as const
const KEYS = ['123A', '456B', '789C', '*0#D'] as const

/** One digit heard: when its tone began and ended, in ms from the start of the audio. */
export interface DetectedDigit {
  readonly digit: string
  readonly startMs: number
  readonly endMs: number
}

/** Options of `detectDtmf`; every field has a default. */
export interface DtmfDetectorOptions {
  readonly sampleRate?: number
  /** Analysis window (default 160 samples = 20 ms at 8 kHz) and hop between windows (default 40 = 5 ms). */
  readonly window?: number
  readonly hop?: number
}

/** Power of `freq` in `x[from, from + n)` (Goertzel), normalised so a full-window sine of amplitude A gives A^2 n / 2. */
function goertzel(x: Int16Array, from: number, n: number, freq: number, rate: number): number {
  const coeff = 2 * Math.cos((2 * Math.PI * freq) / rate)
  let s1 = 0
  let s2 = 0
  for (let i = from; i < from + n; i++) {
    const s = (x[i] ?? 0) + coeff * s1 - s2
    s2 = s1
    s1 = s
  }
  return ((s1 * s1 + s2 * s2 - coeff * s1 * s2) * 2) / n
}

/** The digit a window holds, if it is all tone: two strong Q.23 frequencies, one per group, and nothing else. */
function classify(x: Int16Array, from: number, n: number, rate: number): string | undefined {
  let energy = 0
  let quietRun = 0
  for (let i = from; i < from + n; i++) {
    const v = x[i] ?? 0
    energy += v * v
    // A gap inside the window (silence between tones) disqualifies it, so edges are exact to a hop.
    quietRun = Math.abs(v) < 200 ? quietRun + 1 : 0
    if (quietRun >= 16) return undefined
  }
  if (energy === 0) return undefined
  const low = LOW.map((f) => goertzel(x, from, n, f, rate) / energy)
  const high = HIGH.map((f) => goertzel(x, from, n, f, rate) / energy)
  const li = low.indexOf(Math.max(...low))
  const hi = high.indexOf(Math.max(...high))
  const l = low[li] ?? 0
  const h = high[hi] ?? 0
  const secondLow = Math.max(...low.filter((_, i) => i !== li))
  const secondHigh = Math.max(...high.filter((_, i) => i !== hi))
  // Most of the energy in the pair, neither tone drowned by the other (twist), each clear of its neighbours.
  if (l + h < 0.7 || l < 0.2 || h < 0.2 || secondLow > l / 4 || secondHigh > h / 4) return undefined
  return KEYS[li]?.[hi]
}

/** Decodes 16-bit audio into the digits it carries, in order, with their start and end. */
export function detectDtmf(samples: Int16Array, options: DtmfDetectorOptions = {}): DetectedDigit[] {
  const rate = options.sampleRate ?? 8000
  const n = options.window ?? 160
  const hop = options.hop ?? 40
  const found: DetectedDigit[] = []
  let current: { digit: string; first: number; last: number } | undefined
  const close = () => {
    if (current === undefined) return
    found.push({ digit: current.digit, startMs: (current.first * 1000) / rate, endMs: ((current.last + n) * 1000) / rate })
    current = undefined
  }
  for (let at = 0; at + n <= samples.length; at += hop) {
    const digit = classify(samples, at, n, rate)
    if (digit !== undefined && current?.digit === digit && at - current.last <= hop) current.last = at
    else {
      close()
      if (digit !== undefined) current = { digit, first: at, last: at }
    }
  }
  close()
  return found
}
