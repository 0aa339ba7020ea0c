/** Stable codes carried by `{ type: 'error' }` events of vendor streams (STT and TTS). */
export const VendorErrorCode = {
  /** The vendor refused the key (HTTP 401/403 on upgrade, or an auth close code). Fatal. */
  AuthFailed: 'vendor_auth_failed',
  /** The vendor refused the request or our messages (HTTP 400/404, protocol close codes). Fatal. */
  Rejected: 'vendor_rejected',
  /** The socket closed unexpectedly; a reconnect follows. Not fatal. */
  Disconnected: 'vendor_disconnected',
  /** Reconnecting failed `maxAttempts` times in a row. Fatal. */
  ReconnectExhausted: 'vendor_reconnect_exhausted',
  /** The vendor reported an error in a message; a close that follows decides whether it is fatal. */
  VendorError: 'vendor_error',
  /** The vendor sent something we could not parse. Not fatal. */
  ProtocolError: 'vendor_protocol_error',
  /** A TTS context was in flight when its socket dropped; its audio is incomplete. Not fatal. */
  ContextLost: 'tts_context_lost',
  /** An HTTP vendor did not answer within its time limit; that turn's speech is lost. Not fatal. */
  Timeout: 'vendor_timeout',
  /** An HTTP vendor answered 5xx (or with its error body); that turn's speech is lost. Not fatal. */
  ServerError: 'vendor_server_error',
  /** The recognizer heard speech but returned no text. Not fatal. */
  EmptyTranscript: 'stt_empty_transcript',
  /** The vendor refused a request as too large (HTTP 413) even after it was split. Not fatal. */
  TooLarge: 'vendor_payload_too_large',
  /** The vendor's socket closed while a turn was being transcribed; that turn's speech is lost. Not fatal. */
  TurnLost: 'stt_turn_lost',
  /** The offline speech engine (optional package) could not be loaded. Fatal. */
  LocalUnavailable: 'tts_local_unavailable',
  /** The offline speech engine has no such voice. Fatal. */
  LocalVoiceUnknown: 'tts_local_voice_unknown',
  /** The offline speech engine failed on one sentence. Not fatal. */
  LocalFailed: 'tts_local_failed',
} as const

/** One of {@link VendorErrorCode}. */
export type VendorErrorCodeValue = (typeof VendorErrorCode)[keyof typeof VendorErrorCode]

/** The error event every vendor stream can yield. */
export interface VendorErrorEvent {
  type: 'error'
  code: VendorErrorCodeValue
  message: string
  /** True when the stream has stopped for good; nothing but the end of iteration follows. */
  fatal: boolean
  /** The vendor's own code when it gave one (close code, `error_code`, `code`). */
  vendorCode?: string | number
  /**
   * What the caller said in a turn was lost with this error (a recognizer's request timed out, failed, or came back
   * empty): the pipeline tells the caller, as it does when the agent fails a turn.
   */
  turnFailed?: true
}

/** Yielded after the socket was re-established following an unexpected close. */
export interface VendorReconnectedEvent {
  type: 'reconnected'
}

/** How a vendor stream treats a close or a refused upgrade. */
export type CloseVerdict = { action: 'retry' } | { action: 'fatal'; code: VendorErrorCodeValue; message: string }

/** Default verdict on an HTTP status refusing the WebSocket upgrade. */
export function verdictForUpgradeStatus(status: number): CloseVerdict {
  if (status === 401 || status === 403) {
    return { action: 'fatal', code: VendorErrorCode.AuthFailed, message: `vendor refused the key (HTTP ${status})` }
  }
  if (status === 400 || status === 404 || status === 405 || status === 422) {
    return { action: 'fatal', code: VendorErrorCode.Rejected, message: `vendor rejected the request (HTTP ${status})` }
  }
  return { action: 'retry' }
}

/** Default verdict on a WebSocket close code the vendor sent without being asked to close. */
export function verdictForCloseCode(code: number, reason: string): CloseVerdict {
  // 1002 protocol error, 1003 unsupported data, 1007 bad payload, 1008 policy (bad data or auth), 1009 too big:
  // reconnecting would send the same thing again.
  if (code === 1002 || code === 1003 || code === 1007 || code === 1008 || code === 1009) {
    return { action: 'fatal', code: VendorErrorCode.Rejected, message: `vendor closed the stream (${code} ${reason})`.trim() }
  }
  return { action: 'retry' }
}
