import type { OutputAudioFormat } from '../../audio/audio-format.js'
import type { PipelineLogger } from '../../runtime/logger.js'
import type { VendorErrorEvent, VendorReconnectedEvent } from '../socket/vendor-errors.js'
import type { VendorEndpoint, VendorTransportOptions } from '../socket/vendor-transport.js'

/** Everything a text-to-speech stream needs besides the plugin options. */
export interface TtsStreamOptions {
  /** The transport's own format, asked of the engine so nothing is transcoded on the way. */
  outputFormat: OutputAudioFormat
  endpoint: VendorEndpoint
  signal?: AbortSignal
  logger?: PipelineLogger
  /** Transport tuning (keep-alive, reconnect policy, queue size); defaults suit production. */
  transport?: VendorTransportOptions
}

/** A chunk of speech for one context, in the output format asked for at creation. */
export interface TtsAudioEvent {
  type: 'audio'
  contextId: string
  audio: Buffer
}

/** A flushed context has produced all its audio. Not yielded for cancelled contexts. */
export interface TtsDoneEvent {
  type: 'done'
  contextId: string
}

/** A vendor error; `contextId` is set when it concerns one context only. */
export type TtsErrorEvent = VendorErrorEvent & { contextId?: string }

/** Everything a text-to-speech stream yields. */
export type TtsEvent = TtsAudioEvent | TtsDoneEvent | TtsErrorEvent | VendorReconnectedEvent

/**
 * A live text-to-speech session with one vendor; each assistant utterance is a context (a fresh id per turn).
 * After `cancel(id)` nothing more is yielded for that context, not even `done`.
 */
export interface TtsStream extends AsyncIterable<TtsEvent> {
  /** Append text to a context, opening the context on first use. Ignored for cancelled contexts and after close. */
  pushText(contextId: string, text: string): void
  /** No more text for this context: synthesize what is buffered; `done` follows the last audio. */
  flush(contextId: string): void
  /** Barge-in: stop the context now and drop any audio the vendor still sends for it. */
  cancel(contextId: string): void
  /** Graceful close: flushed contexts finish, then the socket closes; idempotent. */
  close(): Promise<void>
  /** True once closed, aborted or failed. */
  readonly closed: boolean
}
