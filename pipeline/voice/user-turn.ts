import type { PipelineEvent } from './pipeline-io.js'

/**
 * One user turn's transcript with the SPEC's delta_counter rules: an interim delta replaces the previous
 * interim with the same counter; a (final) delta stabilises that segment and the counter moves on, so later
 * interims are appended after it.
 */
export class UserTurn {
  readonly #finals: string[] = []
  #interim = ''
  #counter = 0
  readonly #emit: (e: PipelineEvent) => void
  /** When the user started speaking (ms, pipeline clock). */
  readonly startedAt: number
  /** When speech ended (VAD or push-to-talk release), if it has. */
  speechEndedAt: number | undefined
  /** Whether `turn.start` was sent for this turn. */
  announced = false

  constructor(
    readonly turnId: string,
    now: number,
    emit: (e: PipelineEvent) => void,
  ) {
    this.startedAt = now
    this.#emit = emit
  }

  /** Sends `turn.start` for this turn once. */
  announce(): void {
    if (this.announced) return
    this.announced = true
    this.#emit({ type: 'turn.start', role: 'user', turnId: this.turnId })
  }

  /** Partial text of the current segment. */
  addInterim(text: string): void {
    const t = text.trim()
    if (t === '' || t === this.#interim) return
    this.#interim = t
    this.#emit({ type: 'user.transcript.interim_delta', turnId: this.turnId, content: t, deltaCounter: this.#counter })
  }

  /** A stabilised segment. */
  addFinal(text: string): void {
    const t = text.trim()
    this.#interim = ''
    if (t === '') return
    this.#finals.push(t)
    this.#emit({ type: 'user.transcript.delta', turnId: this.turnId, content: t, deltaCounter: this.#counter })
    this.#counter++
  }

  /** The vendor replayed the turn's audio after a reconnect: its segments start over. */
  restart(): void {
    this.#finals.length = 0
    this.#interim = ''
  }

  /** Words heard so far (finals and the current interim), for the barge-in rule. */
  get wordCount(): number {
    const text = this.text(true)
    return text === '' ? 0 : text.split(/\s+/).length
  }

  /** The turn's text: finals joined, plus the pending interim when `withInterim`. */
  text(withInterim = true): string {
    const parts = withInterim && this.#interim !== '' ? [...this.#finals, this.#interim] : this.#finals
    return parts.join(' ').trim()
  }

  /** Takes a vendor end-of-turn text when it says more than the segments did. */
  complete(vendorText: string | undefined): string {
    const own = this.text(true)
    const v = (vendorText ?? '').trim()
    return v.length > own.length ? v : own
  }
}
