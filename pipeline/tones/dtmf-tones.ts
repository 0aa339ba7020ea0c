/**
 * In-band keypad tones (DTMF, ITU-T Q.23): each digit is the sum of one low-group and one high-group sine.
 * Pure: digits in, PCM16 samples out, at any sample rate.
 */

/** Q.23 frequency pairs (low, high) in Hz. `w` is not a tone: a half-second pause. */
export const DTMF_FREQUENCIES: Readonly<Record<string, readonly [number, number]>> = {
  '1': [697, 1209],
  '2': [697, 1336],
  '3': [697, 1477],
  A: [697, 1633],
  '4': [770, 1209],
  '5': [770, 1336],
  '6': [770, 1477],
  B: [770, 1633],
  '7': [852, 1209],
  '8': [852, 1336],
  '9': [852, 1477],
  C: [852, 1633],
  '*': [941, 1209],
  '0': [941, 1336],
  '#': [941, 1477],
  D: [941, 1633],
}

/** Most digits one `response.dtmf` may play (with pauses, ~30 s at the defaults: a menu, not a fax). */
export const MAX_DTMF_DIGITS = 64
/** Bounds of a configured tone or gap length, in ms (Q.24 receivers need about 40 ms of each). */
export const DTMF_MIN_MS = 40
export const DTMF_MAX_MS = 1000
/** A `w` in the digits: a pause this long. */
export const DTMF_PAUSE_MS = 500

/** How tones are played; every field has a default. */
export interface DtmfToneOptions {
  readonly sampleRate: number
  /** Length of each tone. Default 100 ms. */
  readonly toneMs?: number | undefined
  /** Silence after each tone. Default 100 ms. */
  readonly gapMs?: number | undefined
  /** Level of each of the two tones in dBm0. Default -10. */
  readonly levelDbm0?: number | undefined
}

/** Digits as a backend may send them: 0-9, *, #, A-D (either case) and `w`; normalised to upper-case letters. */
export function parseDtmfDigits(digits: string): { ok: true; digits: string } | { ok: false; problem: string } {
  if (digits === '') return { ok: false, problem: 'digits is empty' }
  if (digits.length > MAX_DTMF_DIGITS) return { ok: false, problem: `at most ${MAX_DTMF_DIGITS} digits` }
  const bad = [...digits].find((d) => !/^[0-9*#A-Da-dw]$/.test(d))
  if (bad !== undefined) return { ok: false, problem: `${JSON.stringify(bad)} is not a keypad digit (0-9, *, #, A-D, w)` }
  return { ok: true, digits: digits.replace(/[a-d]/g, (c) => c.toUpperCase()) }
}

/** Clamps a configured tone or gap length to the bounds, or the default when none was given. */
export function dtmfDuration(ms: number | undefined, fallback = 100): number {
  if (ms === undefined || !Number.isFinite(ms)) return fallback
  return Math.min(DTMF_MAX_MS, Math.max(DTMF_MIN_MS, Math.round(ms)))
}

/**
 * PCM16 of `digits` (already parsed): tone, gap, tone, gap, ... `w` is a 500 ms pause. A full-scale sine in
 * G.711 is +3.17 dBm0, so a tone at L dBm0 peaks at 32767 * 10^((L - 3.17) / 20); two at -10 dBm0 peak at
 * ~14,400, well clear of clipping.
 */
export function dtmfTones(digits: string, options: DtmfToneOptions): Int16Array {
  const rate = options.sampleRate
  const tone = Math.round((dtmfDuration(options.toneMs) * rate) / 1000)
  const gap = Math.round((dtmfDuration(options.gapMs) * rate) / 1000)
  const pause = Math.round((DTMF_PAUSE_MS * rate) / 1000)
  const amplitude = 32767 * 10 ** (((options.levelDbm0 ?? -10) - 3.17) / 20)
  let total = 0
  for (const d of digits) total += d === 'w' ? pause : tone + gap
  const out = new Int16Array(total)
  let at = 0
  for (const d of digits) {
    if (d === 'w') {
      at += pause
      continue
    }
    const pair = DTMF_FREQUENCIES[d]
    if (pair === undefined) throw new RangeError(`not a keypad digit: ${d}`)
    const [low, high] = pair
    const wl = (2 * Math.PI * low) / rate
    const wh = (2 * Math.PI * high) / rate
    for (let i = 0; i < tone; i++) out[at + i] = Math.round(amplitude * (Math.sin(wl * i) + Math.sin(wh * i)))
    at += tone + gap
  }
  return out
}
