import { AgentErrorCode, snippet } from './agent-errors.js'
import type { AgentEvent } from './agent-step.js'
import { MAX_JSON_DEPTH, jsonNestsDeeperThan } from '../runtime/json-depth.js'

/**
 * What `response.transfer` with `mode: "warm"` adds, as the backend sent it: only its shape is checked here;
 * `core/warm-transfer-request.ts` checks the values (bounds, the target) once the session takes it.
 */
export interface WarmTransferCommand {
  /** Spoken to the human only, once they answer. */
  readonly whisper?: string | undefined
  /** Said to the caller before the hold audio starts. */
  readonly hold?: string | undefined
  /** How the human accepts: keypad 1 (2 declines), or answering is acceptance. */
  readonly accept?: 'dtmf' | 'none' | undefined
  /** Seconds from dialling to acceptance before the transfer fails with `timeout`. */
  readonly timeoutS?: number | undefined
  /** Keep transcribing both legs while they are bridged, for the record (the agent still says nothing). */
  readonly transcribe?: boolean | undefined
  /** The caller's `data` events still reach the agent while the transfer runs (everything else of the caller does not). */
  readonly forwardData?: boolean | undefined
}

/**
 * A transfer event as decoded: the pipeline's cold transfer, plus `warm` when the backend asked for a warm one. The
 * cold event carries no `warm` key at all, so it stays exactly what it was before warm transfer existed.
 */
export type TransferAgentEvent = Extract<AgentEvent, { type: 'transfer' }> & { readonly warm?: WarmTransferCommand }

/** Events a backend reply can turn into (the request bookkeeping events `sent`/`first_byte` are not among them). */
export type BackendAgentEvent = Exclude<AgentEvent, { type: 'sent' } | { type: 'first_byte' }> | TransferAgentEvent

/** The outcome of decoding one backend event. */
export type BackendEventResult =
  /** A valid event; `note` says what was repaired (logged by the caller). */
  | { ok: true; event: BackendAgentEvent; note?: string }
  /**
   * Not a valid event for this turn; the turn ends with `agent_bad_event`. `problem` is fixed text (never what the
   * backend sent); `quoted` is the part of the event that shows it, for the failure detail under `debug_failures`.
   */
  | { ok: false; problem: string; quoted?: string }

/** True for events after which nothing more is read: `end`, `hangup`, `transfer`, `error`. */
export function isTerminal(event: AgentEvent): boolean {
  return event.type === 'end' || event.type === 'hangup' || event.type === 'transfer' || event.type === 'error'
}

/**
 * Decodes one backend event object `{ type, content?, turn_id }` (already parsed JSON) for the turn `turnId`.
 * `turn_id` is required and must match; `response.hangup` without content is repaired to an empty farewell;
 * `response.error` becomes an `agent_error` event carrying the backend's (bounded) error text.
 */
export function decodeBackendEvent(value: unknown, turnId: string): BackendEventResult {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, problem: 'event is not a JSON object' }
  }
  const event = value as Record<string, unknown>
  const type = event.type
  if (typeof type !== 'string') return { ok: false, problem: 'event has no string "type"' }
  if (!('turn_id' in event)) return { ok: false, problem: 'an event has no turn_id', quoted: `type ${snippet(type, 40)}` }
  if (event.turn_id !== turnId) {
    const quoted = `${snippet(type, 40)} for turn ${snippet(String(event.turn_id), 80)}`
    return { ok: false, problem: `an event is for another turn, not ${turnId}`, quoted }
  }
  const content = event.content
  switch (type) {
    case 'response.tts':
      if (typeof content !== 'string') return { ok: false, problem: 'response.tts content must be a string' }
      return { ok: true, event: { type: 'tts', text: content } }
    case 'response.data':
      return { ok: true, event: { type: 'data', content: content ?? null } }
    case 'response.end':
      return { ok: true, event: { type: 'end' } }
    case 'response.hangup':
      if (content === undefined || content === null) {
        return { ok: true, event: { type: 'hangup', text: '' }, note: 'response.hangup without content' }
      }
      if (typeof content !== 'string') return { ok: false, problem: 'response.hangup content must be a string' }
      return { ok: true, event: { type: 'hangup', text: content } }
    case 'response.transfer':
      return decodeTransfer(event)
    case 'response.dtmf':
      return decodeDtmf(event)
    case 'response.recording':
      return decodeRecording(event)
    case 'response.dnc':
      return { ok: true, event: { type: 'dnc' } }
    case 'response.error': {
      const error = event.error ?? content
      const text = typeof error === 'string' ? error : JSON.stringify(error ?? 'no details')
      return {
        ok: true,
        event: { type: 'error', code: AgentErrorCode.BackendError, message: `backend reported an error: ${snippet(text)}` },
      }
    }
    default:
      return { ok: false, problem: 'an event of an unknown type', quoted: snippet(type, 80) }
  }
}

/** Longest `to` or `digits` taken from a backend (the checks downstream quote them). */
const MAX_FIELD_CHARS = 512
/**
 * Longest `whisper` or `hold` text taken from a backend. A memory bound, not the meaning's: the warm transfer request
 * (core) allows less and says so to the backend; text beyond this is not a command at all.
 */
export const MAX_TRANSFER_SPEECH_CHARS = 4096

/**
 * `response.transfer` `{ to, content?, caller_id?, headers?, mode?, whisper?, hold?, accept?, timeout_s?, transcribe?, forward_data? }`. Only
 * the shape is checked here: whether `to` is a valid target is the session's to judge (a bad one is reported back to
 * the backend and the call goes on). `mode` absent, null or `"cold"` is a cold transfer, and then the warm fields
 * are ignored, as any unknown field always was.
 */
function decodeTransfer(event: Record<string, unknown>): BackendEventResult {
  const { to, content, caller_id: callerId, headers, mode } = event
  if (mode !== undefined && mode !== null && mode !== 'cold' && mode !== 'warm') {
    return { ok: false, problem: 'response.transfer mode must be "warm" or "cold"' }
  }
  if (typeof to !== 'string' || to.length > MAX_FIELD_CHARS) return { ok: false, problem: 'response.transfer needs "to" as a string' }
  if (content !== undefined && content !== null && typeof content !== 'string') {
    return { ok: false, problem: 'response.transfer content must be a string' }
  }
  if (callerId !== undefined && typeof callerId !== 'string') return { ok: false, problem: 'response.transfer caller_id must be a string' }
  if (headers !== undefined && !isStringMap(headers)) return { ok: false, problem: 'response.transfer headers must map names to strings' }
  const text = typeof content === 'string' ? content : ''
  if (mode !== 'warm') return { ok: true, event: { type: 'transfer', text, to, callerId, headers } }
  const warm = decodeWarm(event)
  if ('problem' in warm) return { ok: false, problem: warm.problem }
  return { ok: true, event: { type: 'transfer', text, to, callerId, headers, warm } }
}

/** The warm fields of a `response.transfer` with `mode: "warm"`; absent and null fields are left out. */
function decodeWarm(event: Record<string, unknown>): WarmTransferCommand | { problem: string } {
  const { whisper, hold, accept, timeout_s: timeoutS, transcribe, forward_data: forwardData } = event
  for (const [name, v] of [
    ['whisper', whisper],
    ['hold', hold],
  ] as const) {
    if (v !== undefined && v !== null && (typeof v !== 'string' || v.length > MAX_TRANSFER_SPEECH_CHARS)) {
      return { problem: `response.transfer ${name} must be a string of at most ${MAX_TRANSFER_SPEECH_CHARS} characters` }
    }
  }
  if (accept !== undefined && accept !== null && accept !== 'dtmf' && accept !== 'none') {
    return { problem: 'response.transfer accept must be "dtmf" or "none"' }
  }
  if (timeoutS !== undefined && timeoutS !== null && (typeof timeoutS !== 'number' || !Number.isFinite(timeoutS))) {
    return { problem: 'response.transfer timeout_s must be a number of seconds' }
  }
  if (transcribe !== undefined && transcribe !== null && typeof transcribe !== 'boolean') {
    return { problem: 'response.transfer transcribe must be true or false' }
  }
  if (forwardData !== undefined && forwardData !== null && typeof forwardData !== 'boolean') {
    return { problem: 'response.transfer forward_data must be true or false' }
  }
  return {
    ...(typeof whisper === 'string' && { whisper }),
    ...(typeof hold === 'string' && { hold }),
    ...((accept === 'dtmf' || accept === 'none') && { accept }),
    ...(typeof timeoutS === 'number' && { timeoutS }),
    ...(typeof transcribe === 'boolean' && { transcribe }),
    ...(typeof forwardData === 'boolean' && { forwardData }),
  }
}

/** `response.dtmf` `{ digits, tone_ms?, gap_ms? }`; the digits themselves are checked where they are played. */
function decodeDtmf(event: Record<string, unknown>): BackendEventResult {
  const { digits, tone_ms: toneMs, gap_ms: gapMs } = event
  if (typeof digits !== 'string' || digits.length > MAX_FIELD_CHARS)
    return { ok: false, problem: 'response.dtmf needs "digits" as a string' }
  for (const [name, v] of [
    ['tone_ms', toneMs],
    ['gap_ms', gapMs],
  ] as const) {
    if (v !== undefined && typeof v !== 'number') return { ok: false, problem: `response.dtmf ${name} must be a number` }
  }
  return { ok: true, event: { type: 'dtmf', digits, toneMs: toneMs as number | undefined, gapMs: gapMs as number | undefined } }
}

/**
 * `response.recording` `{ action: "pause" | "resume" }`; `content: { action }` is read too (the other commands carry
 * their payload in `content`).
 */
function decodeRecording(event: Record<string, unknown>): BackendEventResult {
  const content = event.content
  const action = event.action ?? (typeof content === 'object' && content !== null ? (content as Record<string, unknown>).action : undefined)
  if (action !== 'pause' && action !== 'resume') return { ok: false, problem: 'response.recording needs "action": "pause" or "resume"' }
  return { ok: true, event: { type: 'recording', action } }
}

function isStringMap(v: unknown): v is Record<string, string> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string')
}

/** Parses the data of one SSE event and decodes it; malformed JSON is a problem like any other. */
export function decodeBackendEventText(data: string, turnId: string): BackendEventResult {
  // response.data goes on to the browser through JSON.stringify, which recurses: bounded before the parse.
  if (jsonNestsDeeperThan(data)) return { ok: false, problem: `event data nests deeper than ${MAX_JSON_DEPTH} levels` }
  let value: unknown
  try {
    value = JSON.parse(data)
  } catch {
    return { ok: false, problem: 'event data is not JSON', quoted: snippet(data, 80) }
  }
  return decodeBackendEvent(value, turnId)
}
