/**
 * Assistant audio written to the carrier whose mark has not come back yet, kept so that a paused reply can be
 * played on: the carrier's media stream has no pause, only `clear` (which drops its whole buffer), so pausing is a
 * clear, and resuming sends again what the caller had not heard. Which part that is comes from the mark echoes: the
 * chunk after the last echoed one began playing when that echo arrived (or when it was written, if later), and each
 * chunk plays after the previous one. The echo arrives a network trip after the audio played, and audio written
 * reaches the caller {@link PLAY_DELAY_MS} later at the soonest, so the estimate errs towards sending a little
 * again rather than skipping words.
 */

/** mu-law 8 kHz: bytes per ms, and the 20 ms frame a resumed chunk is cut on. */
const BYTES_PER_MS = 8
const FRAME_BYTES = 160
/** Audio written to the socket is taken to play no sooner than this (the trip to the carrier, its buffering). */
export const PLAY_DELAY_MS = 100

/** A chunk to send again on resume: what is left of it. */
export interface UnplayedChunk {
  readonly chunkId: number
  readonly audio: Buffer
}

interface Written {
  readonly chunkId: number
  readonly audio: Buffer
  readonly writtenAt: number
}

/** Most audio kept: two minutes of mu-law. */
const MAX_BYTES = 120_000 * BYTES_PER_MS

/**
 * Bounded (`max` chunks and two minutes of audio, the oldest forgotten): a carrier that never echoes must not grow
 * memory.
 */
export class UnheardAudio {
  #chunks: Written[] = []
  #bytes = 0
  #lastHeardAt: number | undefined
  readonly #max: number

  constructor(max: number) {
    this.#max = max
  }

  /** Chunk `chunkId` was written to the socket at `at` (ms). */
  written(chunkId: number, audio: Buffer, at: number): void {
    while (this.#chunks.length > 0 && (this.#chunks.length >= this.#max || this.#bytes + audio.length > MAX_BYTES)) {
      this.#bytes -= this.#chunks.shift()!.audio.length
    }
    this.#chunks.push({ chunkId, audio, writtenAt: at })
    this.#bytes += audio.length
  }

  /** The mark of `chunkId` came back at `at`: it and every chunk before it were heard. */
  heard(chunkId: number, at: number): void {
    const i = this.#chunks.findIndex((c) => c.chunkId === chunkId)
    if (i === -1) return
    for (const c of this.#chunks.splice(0, i + 1)) this.#bytes -= c.audio.length
    this.#lastHeardAt = at
  }

  /**
   * The carrier's buffer is cleared at `now` to pause: what the caller has not heard, in order, the chunk playing
   * cut to the frame it had reached; and the last chunk that played in full without its echo yet (its echo is
   * lost in the clear), if any. Everything is forgotten: the chunks sent again are `written` again.
   */
  takeUnplayed(now: number): { unplayed: UnplayedChunk[]; playedThrough: number | undefined } {
    const unplayed: UnplayedChunk[] = []
    let playedThrough: number | undefined
    let cursor = this.#lastHeardAt ?? Number.NEGATIVE_INFINITY
    for (const c of this.#chunks) {
      const start = Math.max(cursor, c.writtenAt + PLAY_DELAY_MS)
      const end = start + c.audio.length / BYTES_PER_MS
      cursor = end
      if (now >= end) {
        playedThrough = c.chunkId
        continue
      }
      const playedFrames = Math.floor(Math.max(0, now - start) * (BYTES_PER_MS / FRAME_BYTES))
      unplayed.push({ chunkId: c.chunkId, audio: playedFrames === 0 ? c.audio : c.audio.subarray(playedFrames * FRAME_BYTES) })
    }
    this.clear()
    return { unplayed, playedThrough }
  }

  /** Forgets everything (a barge-in's clear). */
  clear(): void {
    this.#chunks = []
    this.#bytes = 0
    this.#lastHeardAt = undefined
  }
}
