/**
 * A session's transcript on its way to the store: each finished turn goes through the agent's privacy settings
 * (turn-redactor.ts), then in order to the transcript writer (database, retried). While the backend has paused
 * recording (`response.recording`), turns whose caller spoke in the pause keep no text.
 */
import type { Kysely } from 'kysely'
import type { Log } from '../../../core/log.js'
import type { PrivacyConfig, RedactedWord } from '../../../pipeline/index.js'
import { isDatabaseUnavailable } from '../../store/database-errors.js'
import type { Database } from '../../store/schema.js'
import { appendTranscript, sessionTranscript, type TranscriptTurn } from '../../store/sessions.js'
import { TranscriptWriter } from './transcript-writer.js'
import { TurnRedactor, type TurnToStore } from './turn-redactor.js'
import { PauseSpans } from './pause-spans.js'

/**
 * The stored transcript for a session's `session.end` event. A read that fails (the database gone at that moment)
 * is logged and the event goes without it: the backend still learns that the call ended, and can read the
 * transcript later through the API.
 */
export async function transcriptForEnd(db: Kysely<Database>, sessionId: string, log: Log): ReturnType<typeof sessionTranscript> {
  try {
    return await sessionTranscript(db, sessionId)
  } catch (e) {
    log.error({ err: e, session_id: sessionId }, 'could not read the transcript: session.end is sent without it')
    return []
  }
}

/** What a session's transcript needs. */
export interface SessionTranscriptDeps {
  db: Kysely<Database>
  log: Log
  sessionId: string
  conversationId: string
  privacy: PrivacyConfig
  /** Told of the caller's words that were redacted (the recording silences them). */
  silence?: ((words: readonly RedactedWord[]) => void) | undefined
}

/** One session's transcript: redaction, pauses, ordered and retried storage. */
export class SessionTranscript {
  readonly #writer: TranscriptWriter<TranscriptTurn>
  readonly #redactor: TurnRedactor
  /** When transcripts were paused, wall-clock ms (bounded). */
  readonly pauses = new PauseSpans(Date.now)
  #seq = 0

  constructor(deps: SessionTranscriptDeps) {
    this.#writer = new TranscriptWriter({
      write: ({ seq, turn }) => appendTranscript(deps.db, deps.sessionId, deps.conversationId, seq, turn),
      isTransient: isDatabaseUnavailable,
      log: deps.log,
      sessionId: deps.sessionId,
    })
    this.#redactor = new TurnRedactor({
      privacy: deps.privacy,
      store: (turn) => this.#writer.add({ seq: ++this.#seq, turn }),
      silence: deps.silence,
    })
  }

  /**
   * Takes a finished turn. It counts as paused when the caller's speech ended (the latency's origin; else the
   * turn's start) inside a pause: the reply to a turn said during a pause may come after the resume.
   */
  add(item: TurnToStore & { userSpeechEndedAt?: Date | null | undefined }): void {
    const at = (item.userSpeechEndedAt ?? item.turn.timestamp).getTime()
    const paused = item.paused === true || this.pauses.covers(at)
    this.#redactor.add({ turn: item.turn, userWords: item.userWords, paused })
  }

  /** Transcripts pause (no text kept) until `resume`; what is held is decided first, it was said before. */
  pause(): void {
    if (this.pauses.paused) return
    this.#redactor.flush()
    this.pauses.pause()
  }

  resume(): void {
    this.pauses.resume()
  }

  /** A text redacted with the agent's switches (log lines). */
  redactText(text: string): string {
    return this.#redactor.redactText(text)
  }

  /** Turns not yet written (waiting for a held number or for the database). */
  get pending(): number {
    return this.#redactor.pending + this.#writer.pending
  }

  /** Decides what is held, then waits for the writes: true when every turn was written within `timeoutMs`. */
  flushed(timeoutMs: number): Promise<boolean> {
    this.#redactor.flush()
    return this.#writer.flushed(timeoutMs)
  }

  /** Stops retrying unwritten turns (process shutdown). */
  close(): void {
    this.#writer.close()
  }
}
