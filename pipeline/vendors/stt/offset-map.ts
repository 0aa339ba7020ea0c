/** Segments an {@link OffsetMap} keeps at most (contiguous ones merge: a steady stream is one segment). */
export const MAX_OFFSET_SEGMENTS = 2000

interface Segment {
  /** Where the segment starts in the source stream. */
  from: number
  /** Where the same audio starts in the target stream. */
  to: number
  length: number
}

/**
 * Where audio at an offset of one stream sits in another, piece by piece: the audio a vendor's socket carried
 * (offsets the vendor times words by) against the audio pushed to the STT stream, or the audio sent to STT (VAD
 * gated) against all the caller's audio. Units are the caller's choice (bytes, samples), the same on both sides.
 */
export class OffsetMap {
  #segments: Segment[] = []

  /** `length` units at `from` in the source are the units at `to` in the target. */
  add(from: number, to: number, length: number): void {
    if (length <= 0) return
    const last = this.#segments.at(-1)
    if (last !== undefined && last.from + last.length === from && last.to + last.length === to) {
      last.length += length
      return
    }
    this.#segments.push({ from, to, length })
    if (this.#segments.length > MAX_OFFSET_SEGMENTS) this.#segments.shift()
  }

  /** Forgets everything (a new vendor connection starts its clock at zero). */
  clear(): void {
    this.#segments = []
  }

  /**
   * The target offset of source offset `at`; between two segments (audio the target does not have, such as filler
   * silence) it is the end of the earlier one. Undefined when nothing is known that early, or nothing at all.
   */
  map(at: number): number | undefined {
    let best: Segment | undefined
    for (let i = this.#segments.length - 1; i >= 0; i--) {
      const s = this.#segments[i] as Segment
      if (s.from <= at) {
        best = s
        break
      }
    }
    if (best === undefined) return undefined
    return best.to + Math.min(at - best.from, best.length)
  }
}
