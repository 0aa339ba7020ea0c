/**
 * A session's finished turns on their way to the transcript store, redacted as the agent's `privacy` block says.
 * The caller's words of the whole session are one stream through `createRedactor`, so a card number
 * split across two turns (a pause, a vendor's end of turn) is still one card: a turn whose text ends in a number
 * that may go on waits until the next caller turn (or the session's end) decides it, and turns are handed on in
 * order. The agent's text is redacted turn by turn (`redact`): it arrives whole.
 */
import {
  type PrivacyConfig,
  redact,
  type RedactionSpan,
  createRedactor,
  type RedactedPiece,
  type StreamingRedactor,
  type RedactedWord,
  type TimedWord,
} from '../../../pipeline/index.js'
import type { TranscriptTurn } from '../../store/sessions.js'

/** A finished turn as the pipeline reports it, with what privacy needs besides. */
export interface TurnToStore {
  readonly turn: TranscriptTurn
  /** The caller's words with the STT's timings (in the pipeline's caller-audio seconds), when the STT gave them. */
  readonly userWords?: readonly TimedWord[] | undefined
  /** The caller spoke while recording and transcripts were paused (`response.recording`): no text is kept. */
  readonly paused?: boolean | undefined
}

/** What a {@link TurnRedactor} works with. */
export interface TurnRedactorOptions {
  readonly privacy: PrivacyConfig
  /** Takes each turn, in order, with the text the privacy level allows. */
  store(turn: TranscriptTurn): void
  /** Told of the caller's words that were redacted (to silence the recording over them). */
  silence?(words: readonly RedactedWord[]): void
  /** Turns waiting for a held number at most; beyond it the held number is decided as it stands. */
  maxPending?: number
}

/** Turns that may wait behind a held number by default (a number is held over 3 caller turns at most). */
export const MAX_PENDING_TURNS = 50

interface Pending {
  readonly item: TurnToStore
  /** Where the turn's caller text is in the stream's input (end exclusive); undefined when it pushed none. */
  readonly range: { start: number; end: number } | undefined
}

/** Redacts one session's turns for storage; see the file comment. Synchronous and cheap: never waits. */
export class TurnRedactor {
  readonly #o: TurnRedactorOptions
  readonly #redactor: StreamingRedactor
  readonly #pending: Pending[] = []
  /** Length of the stream's input so far (caller texts joined by one space). */
  #inputLength = 0
  #started = false
  #decidedTo = 0
  /** Decided output from `#outBase` on (what pending turns still need). */
  #out = ''
  #outBase = 0
  /** Spans of `#out` (offsets in the whole stream); `#prunedDelta`: the length change of the spans before them. */
  #spans: RedactionSpan[] = []
  #prunedDelta = 0

  constructor(options: TurnRedactorOptions) {
    this.#o = options
    this.#redactor = createRedactor({ redact: options.privacy.redact })
  }

  /** The redaction options of the agent (for text that is redacted on its own, such as log lines). */
  redactText(text: string): string {
    return redact(text, { redact: this.#o.privacy.redact }).text
  }

  /** Takes a finished turn; it is stored now or once a number its caller text ends in is decided. */
  add(item: TurnToStore): void {
    const text = item.turn.userMessage
    let range: Pending['range']
    if (item.paused !== true && text !== null && text.trim() !== '') {
      const start = this.#started ? this.#inputLength + 1 : 0
      this.#started = true
      this.#inputLength = start + text.length
      range = { start, end: this.#inputLength }
      this.#pending.push({ item, range })
      this.#take(this.#redactor.push(text, item.userWords ?? []))
    } else {
      this.#pending.push({ item, range })
      this.#emitReady()
    }
    if (this.#pending.length > (this.#o.maxPending ?? MAX_PENDING_TURNS)) this.flush()
  }

  /** Decides what is held and stores every waiting turn (the session's end, a pause). */
  flush(): void {
    this.#take(this.#redactor.flush())
  }

  /** Turns not yet handed on. */
  get pending(): number {
    return this.#pending.length
  }

  #take(piece: RedactedPiece): void {
    this.#out += piece.text
    this.#spans.push(...piece.spans)
    this.#decidedTo = piece.decidedTo
    if (piece.words.length > 0) this.#o.silence?.(piece.words)
    this.#emitReady()
  }

  #emitReady(): void {
    for (let head = this.#pending[0]; head !== undefined; head = this.#pending[0]) {
      if (head.range !== undefined && head.range.end > this.#decidedTo) break
      this.#pending.shift()
      this.#o.store(this.#stored(head))
    }
    this.#prune()
  }

  #stored({ item, range }: Pending): TranscriptTurn {
    const level = this.#o.privacy.transcripts
    const turn = item.turn
    if (item.paused === true || level === 'none') return { ...turn, userMessage: null, assistantMessage: null }
    if (level === 'full') return turn
    const assistant = turn.assistantMessage === null ? null : this.redactText(turn.assistantMessage)
    if (range === undefined) return { ...turn, assistantMessage: assistant }
    const from = this.#outputAt(range.start, true) - this.#outBase
    const to = this.#outputAt(range.end, false) - this.#outBase
    return { ...turn, userMessage: this.#out.slice(from, to).trim(), assistantMessage: assistant }
  }

  /**
   * Where input offset `x` lands in the output. Inside a redacted span, a turn's start maps to the marker's start
   * and its end to the marker's end: a number split across two turns shows its marker in both.
   */
  #outputAt(x: number, atStart: boolean): number {
    let delta = this.#prunedDelta
    for (const s of this.#spans) {
      if (s.end <= x) delta += s.outputEnd - s.outputStart - (s.end - s.start)
      else if (s.start < x) return atStart ? s.outputStart : s.outputEnd
      else break
    }
    return x + delta
  }

  /** Drops the output and spans no waiting turn needs any more. */
  #prune(): void {
    const next = this.#pending.find((p) => p.range !== undefined)?.range?.start
    const decidedEnd = this.#outBase + this.#out.length
    const cut = next === undefined ? decidedEnd : Math.min(this.#outputAt(next, true), decidedEnd)
    const keepFrom = next ?? this.#decidedTo
    const gone = this.#spans.filter((s) => s.end <= keepFrom)
    for (const s of gone) this.#prunedDelta += s.outputEnd - s.outputStart - (s.end - s.start)
    this.#spans = this.#spans.filter((s) => s.end > keepFrom)
    if (cut > this.#outBase) {
      this.#out = this.#out.slice(cut - this.#outBase)
      this.#outBase = cut
    }
  }
}
