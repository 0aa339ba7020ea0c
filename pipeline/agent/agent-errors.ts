/** Stable codes carried by `{ type: 'error' }` events of agent steps. */
export const AgentErrorCode = {
  /** The backend sent no byte within time_to_first_byte_ms, or the whole reply took longer than timeout_ms. */
  Timeout: 'agent_timeout',
  /** The backend answered with a non-2xx status (redirects included: they are never followed). */
  HttpError: 'agent_http_error',
  /** The backend could not be reached (DNS, refused connection, TLS). */
  Unreachable: 'agent_unreachable',
  /** The backend reported an error itself (`response.error`). */
  BackendError: 'agent_error',
  /** An event was malformed, of an unknown type, or for another turn; the turn ends there. */
  BadEvent: 'agent_bad_event',
  /** The reply stopped before a terminal event (connection lost, or an empty stream). */
  Incomplete: 'agent_incomplete',
  /** An event or the whole reply exceeded the size limits. */
  TooLarge: 'agent_reply_too_large',
  /** The LLM endpoint answered with a non-2xx status (a wrong key is HTTP 401). */
  LlmHttpError: 'llm_http_error',
  /** The LLM endpoint sent no byte in time, or the completion took too long. */
  LlmTimeout: 'llm_timeout',
  /** The LLM endpoint could not be reached. */
  LlmUnreachable: 'llm_unreachable',
  /** The LLM stream was malformed, too large, reported an error, or stopped early. */
  LlmBadStream: 'llm_bad_stream',
} as const

/** One of {@link AgentErrorCode}. */
export type AgentErrorCodeValue = (typeof AgentErrorCode)[keyof typeof AgentErrorCode]

/** Text from outside (a backend's body or error) made safe for a log line or an error message: one line, bounded. */
export function snippet(text: string, maxChars = 200): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this strips
  const oneLine = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim()
  return oneLine.length > maxChars ? `${oneLine.slice(0, maxChars)}…` : oneLine
}
