import type { PipelineEvent } from './pipeline-io.js'

/**
 * One user turn's transcript with the SPEC's delta_counter rules: an interim delta replaces the previous
 * interim with the same counter; a (final) delta stabilises that segment and the counter moves on, so later
 * interims are appended after it. Nothing of a turn reaches the client before its `turn.start`: words heard
 * while the turn is not announced (the assistant is speaking and may not be interrupted yet) are kept, and sent
 * as deltas right after `turn.start` (a browser SDK stops its playback on a user `turn.start`).
 */
export class UserTurn {
  readonly #finals: { text: string; counter: number }[] = []
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

  /** Sends `turn.start` for this turn once, then the words heard before it. */
  announce(): void {
    if (this.announced) return
    this.announced = true
    this.#emit({ type: 'turn.start', role: 'user', turnId: this.turnId })
    for (const f of this.#finals)
      this.#emit({ type: 'user.transcript.delta', turnId: this.turnId, content: f.text, deltaCounter: f.counter })
    if (this.#interim !== '') {
      this.#emit({ type: 'user.transcript.interim_delta', turnId: this.turnId, content: this.#interim, deltaCounter: this.#counter })
    }
  }

  /** Partial text of the current segment. */
  addInterim(text: string): void {
    const t = text.trim()
    if (t === '' || t === this.#interim) return
    this.#interim = t
    if (this.announced) this.#emit({ type: 'user.transcript.interim_delta', turnId: this.turnId, content: t, deltaCounter: this.#counter })
  }

  /** A stabilised segment. */
  addFinal(text: string): void {
    const t = text.trim()
    this.#interim = ''
    if (t === '') return
    this.#finals.push({ text: t, counter: this.#counter })
    if (this.announced) this.#emit({ type: 'user.transcript.delta', turnId: this.turnId, content: t, deltaCounter: this.#counter })
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
    const finals = this.#finals.map((f) => f.text)
    const parts = withInterim && this.#interim !== '' ? [...finals, this.#interim] : finals
    return parts.join(' ').trim()
  }

  /** Takes a vendor end-of-turn text when it says more than the segments did. */
  complete(vendorText: string | undefined): string {
    const own = this.text(true)
    const v = (vendorText ?? '').trim()
    return v.length > own.length ? v : own
  }
}
