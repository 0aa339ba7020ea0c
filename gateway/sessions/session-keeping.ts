/**
 * What a session keeps, under the agent's `privacy` block: its transcript (redacted, or as said, or no
 * text), its recording (when the organization and the agent both record; the caller's redacted words silenced),
 * and the backend's pauses of both (`response.recording`).
 */
import type { Kysely } from 'kysely'
import type { Log } from '../../core/log.js'
import {
  type PipelineInput,
  resolvePrivacy,
  type PrivacyConfig,
  type PipelineConfig,
  type InputAudioFormat,
  type OutputAudioFormat,
  type TimedWord,
} from '../../pipeline/index.js'
import type { Database, SessionRow } from '../store/schema.js'
import type { TranscriptTurn } from '../store/sessions.js'
import { SessionRecording, type RecordingSettings } from '../recording/session-recording.js'
import type { RecordingOutcome } from '../recording/recording-port.js'
import { WordSilencer } from '../recording/word-silencer.js'
import { SessionTranscript } from './transcript/session-transcript.js'
import type { TurnToStore } from './transcript/turn-redactor.js'

/** What a session's keeping is built from. */
export interface SessionKeepingDeps {
  db: Kysely<Database>
  log: Log
  row: SessionRow
  config: PipelineConfig
  /** The organization records sessions. */
  organizationRecords: boolean
  /** How this process records; without it nothing is. */
  recording: RecordingSettings | undefined
  /** The transport's audio; a text-only transport is not recorded. */
  transport: { kind: string; audio?: { input: InputAudioFormat; output: OutputAudioFormat } | undefined }
}

/** One session's transcript, recording and pauses. */
export class SessionKeeping {
  readonly privacy: PrivacyConfig
  /** The organization and the agent both record (session.end's `recording_status`). */
  readonly recordingEnabled: boolean
  readonly recording: SessionRecording | undefined
  readonly #transcript: SessionTranscript
  readonly #words: WordSilencer | undefined
  readonly #log: Log
  #paused = false

  constructor(deps: SessionKeepingDeps) {
    this.privacy = resolvePrivacy(deps.config.privacy)
    this.#log = deps.log.child({ session_id: deps.row.id })
    this.recordingEnabled = deps.organizationRecords && this.privacy.recordings
    this.#transcript = new SessionTranscript({
      db: deps.db,
      log: deps.log,
      sessionId: deps.row.id,
      conversationId: deps.row.conversation_id,
      privacy: this.privacy,
    })
    const audio = deps.transport.audio
    if (this.recordingEnabled && audio !== undefined && deps.recording !== undefined) {
      const settings = { db: deps.db, log: this.#log, settings: deps.recording, retentionDays: this.privacy.retention_days }
      const recording = new SessionRecording(settings, deps.row, {
        kind: deps.transport.kind,
        audio,
      })
      this.recording = recording
      this.#words = new WordSilencer(this.privacy.redact, (words) => recording.silenceCaller(words))
    }
  }

  /** Starts the recording (if any); it never holds up the session. */
  start(): void {
    this.recording?.start()
  }

  /** The pipeline's input with the recording listening in (as it is without one). */
  tap(input: PipelineInput): PipelineInput {
    return this.recording?.tap(input) ?? input
  }

  /** A finished turn for the transcript. */
  addTurn(turn: TranscriptTurn, extra: Omit<TurnToStore, 'turn'> & { userSpeechEndedAt?: Date | null } = {}): void {
    this.#transcript.add({ ...extra, turn })
  }

  /** A caller's STT segment's timed words: redacted ones are silenced in the recording. */
  sttWords(words: readonly TimedWord[]): void {
    if (!this.#paused) this.#words?.push(words)
  }

  /** `response.recording` from the backend: pause or resume the recording and the transcript's text. */
  recordingCommand(action: 'pause' | 'resume'): void {
    if (action === 'pause' && !this.#paused) {
      this.#paused = true
      // What was said before the pause is decided now: a number held back must not wait into the pause.
      this.#words?.flush()
      this.#transcript.pause()
      this.recording?.pause()
      this.#log.info({ recording: this.recording !== undefined }, 'recording and transcript paused by the backend')
    } else if (action === 'resume' && this.#paused) {
      this.#paused = false
      this.#transcript.resume()
      this.recording?.resume()
      this.#log.info({}, 'recording and transcript resumed by the backend')
    }
  }

  /** Turns not yet written. */
  get pendingTurns(): number {
    return this.#transcript.pending
  }

  /** Decides what is held and waits for the transcript's writes (the session's end). */
  transcriptFlushed(timeoutMs: number): Promise<boolean> {
    this.#words?.flush()
    return this.#transcript.flushed(timeoutMs)
  }

  /** Stops retrying unwritten turns (process shutdown). */
  stopTranscriptRetries(): void {
    this.#transcript.close()
  }

  /** Completes (or fails) the recording at the stored duration; undefined when the session is not recorded. */
  async finishRecording(durationMs: number | undefined): Promise<RecordingOutcome | undefined> {
    const recording = this.recording
    if (recording === undefined) return undefined
    this.#words?.flush()
    return recording.finish(durationMs).catch((e: unknown) => ({
      status: 'failed' as const,
      error: `recording could not be finished: ${e instanceof Error ? e.message : String(e)}`,
    }))
  }
}
