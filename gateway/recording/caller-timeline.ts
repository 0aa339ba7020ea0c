/** Both input formats are 8 kHz. */
const INPUT_RATE = 8000
/** Browser caller audio arriving this much later than its media time means the microphone paused. */
const MIC_PAUSE_MS = 500
/** Stretches of browser media time whose zero is remembered (each microphone pause starts one). */
const MAX_EPOCHS_KEPT = 1000

/**
 * Where caller chunks go on a recording's timeline. Each chunk has a media time: the carrier's timestamp, or for a
 * browser the microphone's running total (it captures continuously). Arrivals can only be late, so the stream's
 * zero is the earliest that any arrival allows and each chunk goes at zero + media time: audio the gateway read late
 * (a busy event loop, a batch of frames) lands where it was spoken. Without timestamps, a chunk arriving much later
 * than its media time says means the microphone paused: the zero moves up to it, starting a new stretch (epoch).
 */
export class CallerTimeline {
  /** Timeline ms of the caller's media time zero, once caller audio came. */
  #streamStart: number | undefined
  /** Caller audio received so far, ms of media time (browsers: no timestamps on the wire). */
  #callerMediaMs = 0
  /** Stretches of caller media time (a browser microphone pause starts one) and each one's timeline zero. */
  #epoch = 0
  readonly #epochZero = new Map<number, number>()
  /** The media time the last caller chunk ended at. */
  #lastMediaEnd = 0

  /** The stretch of media time the last caller chunk is in. */
  get epoch(): number {
    return this.#epoch
  }

  /** The media time the last caller chunk ended at, ms. */
  get lastMediaEnd(): number {
    return this.#lastMediaEnd
  }

  /** Timeline ms of a stretch's media time zero; undefined for one not seen or no longer remembered. */
  zeroOf(epoch: number): number | undefined {
    return this.#epochZero.get(epoch)
  }

  /** When a caller chunk of `inputSamples` ended, ms on the timeline; `now` is the timeline's present. */
  callerEnd(inputSamples: number, mediaTimestampMs: number | undefined, now: number): number {
    const duration = (inputSamples * 1000) / INPUT_RATE
    let mediaEnd: number
    if (mediaTimestampMs !== undefined) {
      mediaEnd = mediaTimestampMs + duration
    } else {
      this.#callerMediaMs += duration
      mediaEnd = this.#callerMediaMs
      if (this.#streamStart !== undefined && now - (this.#streamStart + mediaEnd) > MIC_PAUSE_MS) {
        this.#streamStart = undefined
        this.#epochZero.delete(this.#epoch - MAX_EPOCHS_KEPT)
        this.#epoch += 1
      }
    }
    const zero = now - mediaEnd
    if (this.#streamStart === undefined || zero < this.#streamStart) {
      this.#streamStart = zero
      this.#epochZero.set(this.#epoch, zero)
    }
    this.#lastMediaEnd = mediaEnd
    return this.#streamStart + mediaEnd
  }
}
