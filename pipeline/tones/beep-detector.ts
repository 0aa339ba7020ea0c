/**
 * The gateway's own answering-machine beep detector: a steady single tone of at least 200 ms in the callee's
 * audio (a voicemail greeting's "record after the tone"). It reports when the tone ends, so a message can start
 * right after it. Cheap by design (per 10 ms block: energy, zero crossings, one Goertzel filter) and stateful per
 * call; the session feeds it only for calls with machine detection, and stops once there is a verdict.
 */

/** Tuning of a `BeepDetector`; every field has a default. */
export interface BeepDetectorOptions {
  readonly sampleRate?: number
  /** Shortest tone that counts. Default 200 ms. */
  readonly minToneMs?: number
  /** A tone still going after this long is reported anyway (a message must not wait for ever). Default 2000 ms. */
  readonly maxToneMs?: number
  /** Quietest tone that counts, as RMS of 16-bit samples. Default 300 (about -43 dBm0). */
  readonly minRms?: number
}

/** A beep heard: where it began and ended on the detector's timeline (ms of audio fed so far). */
export interface Beep {
  readonly startMs: number
  readonly endMs: number
  readonly frequencyHz: number
}

const BLOCK_MS = 10
/** Beeps are 400-2500 Hz in practice; speech formants and hum sit elsewhere or are not pure. */
const MIN_HZ = 300
const MAX_HZ = 2600
/** How far one block's frequency may stray from the tone's, relatively (zero crossings count in whole numbers). */
const FREQ_TOLERANCE = 0.08
/** Share of a block's energy the tone's own frequency must hold: speech has harmonics, a beep has one line. */
const MIN_PURITY = 0.75

/** Feeds on 16-bit mono PCM in any chunk size; returns a `Beep` from the `push` in which the tone ended. */
export class BeepDetector {
  readonly #rate: number
  readonly #block: number
  readonly #minBlocks: number
  readonly #maxBlocks: number
  readonly #minEnergy: number
  readonly #buf: Int16Array
  #fill = 0
  #blocks = 0
  /** The steady run in progress: first block, blocks so far, running mean frequency. */
  #run: { first: number; count: number; hz: number } | undefined

  constructor(options: BeepDetectorOptions = {}) {
    this.#rate = options.sampleRate ?? 8000
    this.#block = Math.round((this.#rate * BLOCK_MS) / 1000)
    this.#minBlocks = Math.ceil((options.minToneMs ?? 200) / BLOCK_MS)
    this.#maxBlocks = Math.ceil((options.maxToneMs ?? 2000) / BLOCK_MS)
    const rms = options.minRms ?? 300
    this.#minEnergy = rms * rms * this.#block
    this.#buf = new Int16Array(this.#block)
  }

  /** Audio fed so far, in ms. */
  get fedMs(): number {
    return this.#blocks * BLOCK_MS + (this.#fill * 1000) / this.#rate
  }

  /** Adds samples; the beep whose end they contain, if any. */
  push(samples: Int16Array): Beep | undefined {
    let found: Beep | undefined
    for (let i = 0; i < samples.length; i++) {
      this.#buf[this.#fill++] = samples[i] ?? 0
      if (this.#fill < this.#block) continue
      this.#fill = 0
      found ??= this.#onBlock()
    }
    return found
  }

  #onBlock(): Beep | undefined {
    const index = this.#blocks++
    const hz = this.#steadyTone()
    const run = this.#run
    if (hz !== undefined && run !== undefined && Math.abs(hz - run.hz) <= run.hz * FREQ_TOLERANCE) {
      run.hz += (hz - run.hz) / (run.count + 1)
      run.count++
      if (run.count >= this.#maxBlocks) return this.#end(run, index + 1)
      return undefined
    }
    const ended = run !== undefined && run.count >= this.#minBlocks ? this.#end(run, index) : undefined
    this.#run = hz === undefined ? undefined : { first: index, count: 1, hz }
    return ended
  }

  #end(run: { first: number; count: number; hz: number }, endBlock: number): Beep {
    this.#run = undefined
    return { startMs: run.first * BLOCK_MS, endMs: endBlock * BLOCK_MS, frequencyHz: Math.round(run.hz) }
  }

  /** The block's frequency when it is one loud, pure tone in the beep band; undefined otherwise. */
  #steadyTone(): number | undefined {
    const x = this.#buf
    let energy = 0
    let crossings = 0
    let firstAt = 0
    let lastAt = 0
    let prev = x[0] ?? 0
    energy += prev * prev
    for (let i = 1; i < x.length; i++) {
      const v = x[i] ?? 0
      energy += v * v
      if (v >= 0 !== prev >= 0) {
        // Where the line between the two samples crosses zero: whole-sample counting is too coarse in 10 ms.
        const at = i - 1 + prev / (prev - v)
        if (crossings === 0) firstAt = at
        lastAt = at
        crossings++
      }
      prev = v
    }
    if (energy < this.#minEnergy || crossings < 3) return undefined
    const hz = ((crossings - 1) * this.#rate) / (2 * (lastAt - firstAt))
    if (hz < MIN_HZ || hz > MAX_HZ) return undefined
    // Goertzel at the estimated frequency: a pure tone puts (nearly) all its energy there.
    const coeff = 2 * Math.cos((2 * Math.PI * hz) / this.#rate)
    let s1 = 0
    let s2 = 0
    for (let i = 0; i < x.length; i++) {
      const s = (x[i] ?? 0) + coeff * s1 - s2
      s2 = s1
      s1 = s
    }
    const power = ((s1 * s1 + s2 * s2 - coeff * s1 * s2) * 2) / x.length
    return power / energy >= MIN_PURITY ? hz : undefined
  }
}
