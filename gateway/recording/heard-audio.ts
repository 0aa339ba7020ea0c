import { OffsetMap } from '../../pipeline/index.js'

/** Both caller audio formats are 8 kHz. */
const RATE = 8000
/** Stretches of media time a recording remembers (a browser microphone that pauses starts a new one). */
const MAX_EPOCHS = 1000

/**
 * Where the caller audio one pipeline heard is on a recording's timeline. Each chunk is kept by its media time
 * (the carrier's timestamp, or a browser's running total), not by where it was first placed: the timeline's zero
 * for that media time can still move earlier when a less delayed chunk arrives (see CallerTimeline), and a
 * browser microphone that paused starts a new stretch of media time with a zero of its own.
 */
export class HeardAudio {
  /** Pipeline samples -> media samples. */
  readonly #media = new OffsetMap()
  /** Where each stretch of media time starts, in pipeline samples, and which stretch it is. */
  readonly #epochs: { from: number; epoch: number }[] = []
  #samples = 0

  /** A chunk of `samples` the pipeline heard, ending at `mediaEndMs` of media time in stretch `epoch`. */
  add(samples: number, mediaEndMs: number, epoch: number): void {
    if (this.#epochs.at(-1)?.epoch !== epoch) {
      this.#epochs.push({ from: this.#samples, epoch })
      if (this.#epochs.length > MAX_EPOCHS) this.#epochs.shift()
    }
    this.#media.add(this.#samples, Math.round((mediaEndMs * RATE) / 1000) - samples, samples)
    this.#samples += samples
  }

  /** The timeline ms of `seconds` into what the pipeline heard, given each stretch's zero; undefined if unknown. */
  timelineMs(seconds: number, zeroOf: (epoch: number) => number | undefined): number | undefined {
    const at = seconds * RATE
    const media = this.#media.map(at)
    const epoch = this.#epochs.findLast((e) => e.from <= at)?.epoch
    if (media === undefined || epoch === undefined) return undefined
    const zero = zeroOf(epoch)
    return zero === undefined ? undefined : zero + (media * 1000) / RATE
  }
}
