/**
 * What the caller has actually heard of one assistant turn. Carriers report it precisely (a mark per audio
 * chunk comes back once played); browsers report `replay_finished` when their buffer drains; between reports
 * the caller is assumed to hear audio in real time from the first chunk on.
 */
export class Playback {
  readonly #chunks: { id: number; endMs: number }[] = []
  #sentMs = 0
  #playedMs = 0
  #firstSentAt: number | undefined
  readonly #precise: boolean

  /** `precise`: the transport reports every chunk (carrier marks), so no clock estimate is used. */
  constructor(precise: boolean) {
    this.#precise = precise
  }

  /** A chunk of `durationMs` was handed to the transport. */
  sent(chunkId: number, durationMs: number, now: number): void {
    this.#firstSentAt ??= now
    this.#sentMs += durationMs
    this.#chunks.push({ id: chunkId, endMs: this.#sentMs })
  }

  /** The transport says chunks up to `chunkId` were heard; false when the chunk is not this turn's. */
  markPlayed(chunkId: number): boolean {
    let found = false
    for (const c of this.#chunks) {
      if (c.id > chunkId) break
      if (c.endMs > this.#playedMs) this.#playedMs = c.endMs
      found = found || c.id === chunkId
    }
    return found
  }

  /** True when chunk `chunkId` was sent in this turn. */
  has(chunkId: number): boolean {
    return this.#chunks.some((c) => c.id === chunkId)
  }

  /** Everything sent so far has been played (browser replay_finished). */
  allPlayed(): void {
    this.#playedMs = this.#sentMs
  }

  /** At least `ms` of what was sent has been played (a report that cannot cover more than real time allows). */
  playedAtLeast(ms: number): void {
    this.#playedMs = Math.max(this.#playedMs, Math.min(this.#sentMs, ms))
  }

  /** Milliseconds heard by `now`. */
  heardMs(now: number): number {
    if (this.#precise || this.#firstSentAt === undefined) return this.#playedMs
    return Math.max(this.#playedMs, Math.min(this.#sentMs, now - this.#firstSentAt))
  }

  /** Total audio handed to the transport. */
  get totalMs(): number {
    return this.#sentMs
  }

  /** True once everything sent has been heard (with `slackMs` for clock estimates). */
  isDone(now: number, slackMs = 250): boolean {
    if (this.#precise) return this.#playedMs >= this.#sentMs
    return this.#playedMs >= this.#sentMs || (this.#firstSentAt !== undefined && now - this.#firstSentAt >= this.#sentMs + slackMs)
  }
}

/** Average milliseconds of speech per character, used before a turn's audio is complete. */
const MS_PER_CHAR = 65

/**
 * The part of `text` the caller heard: the fraction `heardMs / totalMs` of it (when all audio is known) or
 * `heardMs / 65 ms` per character (while it is still being made), cut back to a whole word.
 */
export function heardText(text: string, heardMs: number, totalMs: number | undefined): string {
  if (heardMs <= 0 || text === '') return ''
  const chars = totalMs !== undefined && totalMs > 0 ? Math.round((text.length * heardMs) / totalMs) : Math.round(heardMs / MS_PER_CHAR)
  if (chars >= text.length) return text
  const cut = text.slice(0, chars)
  const lastSpace = cut.search(/\s\S*$/)
  return (lastSpace > 0 ? cut.slice(0, lastSpace) : '').trim()
}
