/**
 * Typed messages of the browser WebSocket (`{ws_url}/v1/agents/web/websocket`). Wire names stay in the codec;
 * these are what the transport works with.
 */

/** A client message after decoding and validation. */
export type BrowserClientMessage =
  | { type: 'client.ready' }
  /** PCM16 LE 8 kHz mono, an even number of bytes (possibly empty). */
  | { type: 'client.audio'; audio: Buffer }
  | { type: 'vad_events'; event: 'vad_start' | 'vad_end' | 'vad_model_failed' }
  /** Without `turnId` the report is for the current assistant turn. */
  | { type: 'trigger.response.audio.replay_finished'; turnId?: string }
  | { type: 'trigger.turn.start' }
  | { type: 'trigger.turn.end' }
  | { type: 'client.response.text'; content: string }
  | { type: 'client.response.data'; data: unknown }

/**
 * Codes of the gateway's `error` message. The first group answers a bad client frame (the frame is dropped and the
 * session goes on); the second are notices about the session itself.
 */
export type BrowserErrorCode =
  | 'invalid_json'
  | 'json_too_deep'
  | 'invalid_message'
  | 'unknown_message_type'
  | 'frame_too_large'
  | 'binary_frame_not_supported'
  | 'invalid_audio'
  | 'audio_throttled'
  | 'rate_limited'
  | 'audio_dropped'

/** Why a frame was refused: a stable code and a message safe to show the user's developer. */
export interface BrowserFrameError {
  code: BrowserErrorCode
  message: string
}

/** Result of decoding one frame. */
export type DecodeResult = { ok: true; message: BrowserClientMessage } | { ok: false; error: BrowserFrameError }
