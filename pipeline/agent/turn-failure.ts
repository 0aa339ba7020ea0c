import { AgentErrorCode } from './agent-errors.js'
import type { ConnectionFailureWords } from './connection-failure.js'
import type { ExchangeErrorCode } from './http-exchange.js'

/**
 * Why a turn left the caller without the agent's answer, as stored and reported (session details, metrics,
 * traces, `--tail`): `http_<status>` for a non-2xx reply, or one of the fixed names below.
 */
export type TurnFailureCause =
  | `http_${number}`
  /** No first byte, or no speakable text, within the agent's timeout. */
  | 'timeout'
  | 'connect_refused'
  /** DNS, TLS, a reset before any response. */
  | 'connect_failed'
  /** A body that is not an event stream, or malformed or oversized events. */
  | 'invalid_stream'
  /** The stream broke after it started. */
  | 'stream_broken'
  /** The reply ended with nothing to speak. */
  | 'empty_reply'
  /** The backend reported an error itself (`response.error`) before saying anything. */
  | 'backend_error'
  /** Speech synthesis failed for the turn. */
  | 'tts_failed'
  /** The speech recognizer lost what the caller said (its request failed, timed out or was unreadable). */
  | 'stt_failed'

/** A failed turn as the session stores it. */
export interface TurnFailure {
  cause: TurnFailureCause
  /** End of the caller's turn (or the request, for a welcome) to the first audio the caller heard in the turn. */
  waitedMs: number
  /** The fallback text spoken instead, or null. */
  heard: string | null
  /** One short human line; never a body or a secret. */
  detail: string | null
}

/** Longest `detail` kept. */
export const FAILURE_DETAIL_MAX_CHARS = 200

/** The cause of a failed exchange; `words` say what its connection did, when it failed there. */
export function exchangeFailureCause(
  code: Exclude<ExchangeErrorCode, 'aborted'>,
  words: ConnectionFailureWords | undefined,
): TurnFailureCause {
  switch (code) {
    case 'first_byte_timeout':
    case 'total_timeout':
      return 'timeout'
    case 'unreachable':
      return words === 'connection refused' ? 'connect_refused' : 'connect_failed'
    case 'cut_off':
      return 'stream_broken'
    case 'too_large':
      return 'invalid_stream'
  }
}

/** The cause of an agent `error` event: the one the step named, else the one its code implies. */
export function agentFailureCause(event: { code: string; message: string; cause?: TurnFailureCause | undefined }): TurnFailureCause {
  if (event.cause !== undefined) return event.cause
  switch (event.code) {
    case AgentErrorCode.Timeout:
    case AgentErrorCode.LlmTimeout:
      return 'timeout'
    case AgentErrorCode.Unreachable:
    case AgentErrorCode.LlmUnreachable:
      return 'connect_failed'
    case AgentErrorCode.Incomplete:
      return 'stream_broken'
    case AgentErrorCode.BackendError:
      return 'backend_error'
    case AgentErrorCode.HttpError:
    case AgentErrorCode.LlmHttpError: {
      const status = /HTTP (\d{3})/.exec(event.message)?.[1]
      return status === undefined ? 'invalid_stream' : `http_${Number(status)}`
    }
    default:
      return 'invalid_stream'
  }
}

/** `text` as a failure detail: one line, at most {@link FAILURE_DETAIL_MAX_CHARS} characters. */
export function failureDetail(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this strips
  const line = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim()
  return line.length > FAILURE_DETAIL_MAX_CHARS ? `${line.slice(0, FAILURE_DETAIL_MAX_CHARS - 1)}…` : line
}

/** An error event's message, with what the target said (`debugDetail`, debug_failures only) after it. */
export function withDebugDetail(event: { message: string; debugDetail?: string | undefined }): string {
  return event.debugDetail === undefined || event.debugDetail === '' ? event.message : `${event.message}: ${event.debugDetail}`
}
