/** Assembles a user turn's live transcript from the SPEC's delta_counter messages. Pure, no DOM. */

/** The transcript of one user turn as it stands. */
export interface UserTranscript {
  turnId: string
  /** Stable text followed by the current interim text. */
  text: string
  /** Text that will not change any more (finalized deltas, or the final transcript). */
  stable: string
  /** Interim text that may still be replaced. */
  interim: string
  /** True once `user.transcript` arrived. */
  final: boolean
}

interface Segment {
  text: string
  stable: boolean
}

/**
 * Rules: `interim_delta` replaces the interim text with the same delta_counter; `delta` stabilises the segment of its
 * counter (replacing that interim text); later interim deltas carry an incremented counter and are appended after
 * it; `user.transcript` is the complete text and wins.
 */
export class UserTranscriptAssembler {
  readonly #turns = new Map<string, { segments: Map<number, Segment>; final?: string }>()

  interim(turnId: string, counter: number, content: string): UserTranscript {
    const turn = this.#turn(turnId)
    const existing = turn.segments.get(counter)
    if (turn.final === undefined && !existing?.stable) turn.segments.set(counter, { text: content, stable: false })
    return this.get(turnId)
  }

  delta(turnId: string, counter: number, content: string): UserTranscript {
    const turn = this.#turn(turnId)
    if (turn.final === undefined) turn.segments.set(counter, { text: content, stable: true })
    return this.get(turnId)
  }

  final(turnId: string, content: string): UserTranscript {
    this.#turn(turnId).final = content
    return this.get(turnId)
  }

  /** Current transcript of a turn (empty when unknown). */
  get(turnId: string): UserTranscript {
    const turn = this.#turns.get(turnId)
    if (turn?.final !== undefined) return { turnId, text: turn.final, stable: turn.final, interim: '', final: true }
    const ordered = [...(turn?.segments ?? new Map<number, Segment>()).entries()].sort((a, b) => a[0] - b[0])
    const stable = join(ordered.filter(([, s]) => s.stable).map(([, s]) => s.text))
    const interim = join(ordered.filter(([, s]) => !s.stable).map(([, s]) => s.text))
    return { turnId, text: join([stable, interim]), stable, interim, final: false }
  }

  /** Forget turns other than the most recent `keep` (bounded memory in long conversations). */
  prune(keep = 20): void {
    while (this.#turns.size > keep) {
      const oldest = this.#turns.keys().next().value
      if (oldest === undefined) break
      this.#turns.delete(oldest)
    }
  }

  #turn(turnId: string) {
    let turn = this.#turns.get(turnId)
    if (turn === undefined) {
      turn = { segments: new Map() }
      this.#turns.set(turnId, turn)
      this.prune()
    }
    return turn
  }
}

function join(parts: string[]): string {
  return parts
    .map((p) => p.trim())
    .filter((p) => p.length > 0)
    .join(' ')
}
