/**
 * The receiver's replay list of RFC 3711 section 3.3.2: the highest packet index authenticated so far, and which
 * of the `size` indices below it were seen. A ring of flags indexed by `index mod size` instead of a shifted
 * bit mask: checking and marking are O(1), and moving the top clears only the slots it passes over.
 */

/** The window RFC 3711 section 3.3.2 asks at least (64); 128 as libsrtp uses, for a reordering network. */
export const SRTP_REPLAY_WINDOW = 128

/** Replay protection for one stream (one SSRC's SRTP, or its SRTCP). */
export class SrtpReplayWindow {
  readonly #size: number
  readonly #seen: Uint8Array
  #top = -1

  constructor(size = SRTP_REPLAY_WINDOW) {
    this.#size = size
    this.#seen = new Uint8Array(size)
  }

  /** The highest index marked; -1 before the first. */
  get top(): number {
    return this.#top
  }

  /** False when `index` was seen already or is older than the window: such a packet is dropped before its tag is checked. */
  accepts(index: number): boolean {
    if (this.#top < 0 || index > this.#top) return true
    if (index <= this.#top - this.#size) return false
    return this.#seen[index % this.#size] === 0
  }

  /** Marks an index whose packet authenticated (only then: a forged packet must not move the window). */
  mark(index: number): void {
    if (index > this.#top) {
      // The slots the top passes over held indices a whole window older: they are free again.
      if (this.#top >= 0) for (let i = Math.max(this.#top + 1, index - this.#size + 1); i <= index; i++) this.#seen[i % this.#size] = 0
      this.#top = index
    }
    this.#seen[index % this.#size] = 1
  }
}
