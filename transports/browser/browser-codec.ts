import type { PipelineEvent } from '../../pipeline/index.js'
import type { BrowserClientMessage, BrowserErrorCode, BrowserFrameError, DecodeResult } from './browser-messages.js'

/**
 * Largest text frame the codec decodes. Bigger frames (up to the socket's hard limit) get `frame_too_large` and
 * are dropped; a 100 ms `client.audio` chunk is ~2.2 KB, a 2 s one ~43 KB.
 */
export const MAX_TEXT_FRAME_BYTES = 64 * 1024

/** Largest decoded `client.audio` chunk: 2 s of 8 kHz PCM16. */
export const MAX_AUDIO_CHUNK_BYTES = 32_000

/** Longest `client.response.text` content, in UTF-16 code units. */
export const MAX_USER_TEXT_CHARS = 8_000

/** Longest `turn_id` a client may send back. */
const MAX_TURN_ID_CHARS = 200

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/
const VAD_EVENTS = new Set(['vad_start', 'vad_end', 'vad_model_failed'])

function fail(code: BrowserErrorCode, message: string): DecodeResult {
  return { ok: false, error: { code, message } }
}

function ok(message: BrowserClientMessage): DecodeResult {
  return { ok: true, message }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Strict base64 (standard alphabet, padding optional) of PCM16: an even number of bytes. */
export function decodeAudioContent(content: string): { ok: true; audio: Buffer } | { ok: false; error: BrowserFrameError } {
  const padded = content.endsWith('=')
  if (!BASE64.test(content) || (padded && content.length % 4 !== 0) || content.length % 4 === 1) {
    return { ok: false, error: { code: 'invalid_audio', message: 'client.audio content is not valid base64' } }
  }
  const audio = Buffer.from(content, 'base64')
  if (audio.length % 2 !== 0) {
    return {
      ok: false,
      error: { code: 'invalid_audio', message: `client.audio must be 16-bit PCM: ${audio.length} bytes is an odd length` },
    }
  }
  if (audio.length > MAX_AUDIO_CHUNK_BYTES) {
    return {
      ok: false,
      error: { code: 'frame_too_large', message: `client.audio chunks may carry at most ${MAX_AUDIO_CHUNK_BYTES} bytes (2 s) of audio` },
    }
  }
  return { ok: true, audio }
}

/** `role`, when present, must be `user`: push-to-talk controls only the user's turn. */
function userRole(msg: Record<string, unknown>, type: string): BrowserFrameError | undefined {
  if (msg.role === undefined || msg.role === 'user') return undefined
  return { code: 'invalid_message', message: `${type} role must be "user"` }
}

/**
 * Decodes one client frame. Pure: no I/O, no state. Extra fields are ignored (newer SDKs may send more); wrong
 * field types, unknown types, bad audio and oversized frames are refused with a code and a reason.
 */
export function decodeClientFrame(data: Buffer | string, isBinary = false): DecodeResult {
  if (isBinary)
    return fail('binary_frame_not_supported', 'binary frames are not supported: send JSON text frames (client.audio carries base64 PCM16)')
  const size = typeof data === 'string' ? Buffer.byteLength(data) : data.length
  if (size > MAX_TEXT_FRAME_BYTES) return fail('frame_too_large', `frame of ${size} bytes exceeds the ${MAX_TEXT_FRAME_BYTES}-byte limit`)
  let msg: unknown
  try {
    msg = JSON.parse(typeof data === 'string' ? data : data.toString('utf8'))
  } catch {
    return fail('invalid_json', 'frame is not valid JSON')
  }
  if (!isRecord(msg)) return fail('invalid_message', 'a message must be a JSON object with a string "type"')
  const type = msg.type
  if (typeof type !== 'string') return fail('invalid_message', 'a message must be a JSON object with a string "type"')
  switch (type) {
    case 'client.ready':
      return ok({ type })
    case 'client.audio': {
      if (typeof msg.content !== 'string') return fail('invalid_message', 'client.audio content must be a base64 string')
      const decoded = decodeAudioContent(msg.content)
      return decoded.ok ? ok({ type, audio: decoded.audio }) : { ok: false, error: decoded.error }
    }
    case 'vad_events': {
      const event = msg.event
      if (typeof event !== 'string' || !VAD_EVENTS.has(event)) {
        return fail('invalid_message', 'vad_events event must be "vad_start", "vad_end" or "vad_model_failed"')
      }
      return ok({ type, event: event as 'vad_start' | 'vad_end' | 'vad_model_failed' })
    }
    case 'trigger.response.audio.replay_finished': {
      // Widely used clients leave turn_id out (or send null or ""): the report then means the current assistant turn.
      const turnId = msg.turn_id
      const named = turnId !== undefined && turnId !== null && turnId !== ''
      if (named && (typeof turnId !== 'string' || turnId.length > MAX_TURN_ID_CHARS)) {
        return fail('invalid_message', 'trigger.response.audio.replay_finished turn_id, when present, must be a string')
      }
      if (msg.reason !== undefined && typeof msg.reason !== 'string') {
        return fail('invalid_message', 'trigger.response.audio.replay_finished reason must be a string ("completed")')
      }
      return named ? ok({ type, turnId: turnId as string }) : ok({ type })
    }
    case 'trigger.turn.start':
    case 'trigger.turn.end': {
      const bad = userRole(msg, type)
      return bad === undefined ? ok({ type }) : { ok: false, error: bad }
    }
    case 'client.response.text': {
      if (typeof msg.content !== 'string') return fail('invalid_message', 'client.response.text content must be a string')
      if (msg.content.length > MAX_USER_TEXT_CHARS) {
        return fail('frame_too_large', `client.response.text content may have at most ${MAX_USER_TEXT_CHARS} characters`)
      }
      return ok({ type, content: msg.content })
    }
    case 'client.response.data':
      if (!('data' in msg)) return fail('invalid_message', 'client.response.data needs a "data" field (any JSON value)')
      return ok({ type, data: msg.data })
    default:
      return fail('unknown_message_type', `unknown message type ${JSON.stringify(type.slice(0, 64))}`)
  }
}

/** A server message as sent on the wire. */
export type BrowserServerMessage = Record<string, unknown> & { type: string }

/**
 * Maps a pipeline event to the server message the browser receives, or `undefined` for events with no wire form
 * (`clear_playback`: the user `turn.start` already tells the client to stop; `pause_playback` and `resume_playback`:
 * the transport holds back audio it has not sent, the SDK has no pause; `hangup`: the socket closes).
 */
export function encodeServerEvent(event: PipelineEvent): BrowserServerMessage | undefined {
  switch (event.type) {
    case 'turn.start':
      return { type: 'turn.start', role: event.role, turn_id: event.turnId }
    case 'turn.end':
      return { type: 'turn.end', role: event.role, turn_id: event.turnId }
    case 'audio':
      // chunkId is unique per session, so the delta id is unique per message.
      return {
        type: 'response.audio',
        content: event.audio.toString('base64'),
        delta_id: `${event.turnId}:${event.chunkId}`,
        turn_id: event.turnId,
      }
    case 'assistant.text.delta':
      return { type: 'response.text.delta', content: event.content, turn_id: event.turnId }
    case 'assistant.text':
      return { type: 'response.text', content: event.content, turn_id: event.turnId }
    case 'user.transcript.interim_delta':
      return { type: 'user.transcript.interim_delta', content: event.content, turn_id: event.turnId, delta_counter: event.deltaCounter }
    case 'user.transcript.delta':
      return { type: 'user.transcript.delta', content: event.content, turn_id: event.turnId, delta_counter: event.deltaCounter }
    case 'user.transcript':
      return { type: 'user.transcript', content: event.content, turn_id: event.turnId }
    case 'data':
      return { type: 'response.data', content: event.content, turn_id: event.turnId }
    case 'response.end':
      return { type: 'response.end', turn_id: event.turnId }
    case 'notice':
      return errorMessage(event.code, event.message)
    case 'clear_playback':
    case 'pause_playback':
    case 'resume_playback':
    case 'hangup':
    case 'recording':
      return undefined
  }
}

/** The gateway's `error` message: `{ type: 'error', code, message }` for bad frames and session notices alike. */
export function errorMessage(code: string, message: string): BrowserServerMessage {
  return { type: 'error', code, message }
}
