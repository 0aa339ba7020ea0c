import type { AudioFormat } from '../../audio/audio-format.js'
import type { PipelineLogger } from '../../runtime/logger.js'
import type { VendorErrorEvent, VendorReconnectedEvent } from '../socket/vendor-errors.js'
import type { VendorEndpoint, VendorTransportOptions } from '../socket/vendor-transport.js'

/** Everything a speech-to-text stream needs besides the plugin options. */
export interface SttStreamOptions {
  /** The audio the caller pushes. */
  format: AudioFormat
  endpoint: VendorEndpoint
  signal?: AbortSignal
  logger?: PipelineLogger
  /**
   * Word timings are wanted (the recording silences redacted words): a vendor that must ask for them separately
   * (`verbose_json`) does. Default true.
   */
  wantWords?: boolean
  /** Transport tuning (keep-alive, reconnect policy, queue size); defaults suit production. */
  transport?: VendorTransportOptions & {
    /** Seconds of the current turn's audio kept for replay after a reconnect. Default 5. */
    replaySeconds?: number
    /**
     * Caller audio is put on the wire in messages of at least this many ms (a phone's 20 ms frames three at a
     * time): each message costs a socket write, and at hundreds of calls those writes were the gateway's largest
     * cost after the VAD. A finalize sends what is held first. 0 sends every push as it comes. Default 60 (0 for a
     * vendor whose adapter sizes its own messages).
     */
    sendChunkMs?: number
  }
}

/** The user started speaking (vendor VAD). */
export interface SttSpeechStartedEvent {
  type: 'speech_started'
}

/** Partial text of the current segment; replaces the previous interim. */
export interface SttInterimEvent {
  type: 'interim'
  text: string
}

/**
 * A stabilised segment of the current turn. The finals of a turn, joined with spaces, make its text; vendors that
 * only report whole turns yield one final right before `end_of_turn`.
 */
export interface SttFinalEvent {
  type: 'final'
  text: string
  /**
   * The segment's words as the vendor timed them, in seconds of the audio pushed to this stream (a reconnect's
   * replay and filler silence are accounted for); absent when the vendor gives no timings.
   */
  words?: readonly SttWord[]
}

/** A recognised word and when it was said: seconds from the start of the audio pushed to the stream. */
export interface SttWord {
  readonly word: string
  readonly start: number
  readonly end: number
}

/** The vendor says the user's turn ended; `text` is the whole turn (may be empty when nothing was recognised). */
export interface SttEndOfTurnEvent {
  type: 'end_of_turn'
  text: string
}

/** Transcript events an adapter produces. */
export type SttTranscriptEvent = SttSpeechStartedEvent | SttInterimEvent | SttFinalEvent | SttEndOfTurnEvent

/**
 * Everything a speech-to-text stream yields. After `reconnected`, the buffered audio of the current turn is
 * replayed, so interim/final events of the current turn start over: consumers reset their view of the open turn.
 */
export type SttEvent = SttTranscriptEvent | VendorErrorEvent | VendorReconnectedEvent

/** A live speech-to-text session with one vendor. */
export interface SttStream extends AsyncIterable<SttEvent> {
  /** Audio in the format given at creation; buffered while (re)connecting. Ignored after close. */
  pushAudio(chunk: Buffer): void
  /** Ask the vendor to finish the current utterance now (push-to-talk release, silence timeout). */
  finalize(): void
  /**
   * The consumer ended the user turn without the vendor's end of turn (none came within `base_timeout_ms`; the
   * vendor may answer a finalize late or not at all): the stream forgets what it holds of that turn, so a late
   * answer does not end it a second time and its text does not lead the next turn's. Streams that hold nothing
   * per turn leave it out.
   */
  turnEnded?(): void
  /** Graceful close (vendor's CloseStream/Terminate), waits for late results; idempotent. */
  close(): Promise<void>
  /** True once closed, aborted or failed. */
  readonly closed: boolean
}
