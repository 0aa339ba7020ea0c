import { AgentErrorCode, snippet } from './agent-errors.js'
import type { AgentEvent } from './agent-step.js'

/** Events a backend reply can turn into (the request bookkeeping events `sent`/`first_byte` are not among them). */
export type BackendAgentEvent = Exclude<AgentEvent, { type: 'sent' } | { type: 'first_byte' }>

/** The outcome of decoding one backend event. */
export type BackendEventResult =
  /** A valid event; `note` says what was repaired (logged by the caller). */
  | { ok: true; event: BackendAgentEvent; note?: string }
  /** Not a valid event for this turn; the turn ends with `agent_bad_event`. */
  | { ok: false; problem: string }

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
  if (!('turn_id' in event)) return { ok: false, problem: `${snippet(type, 40)} event has no turn_id` }
  if (event.turn_id !== turnId) {
    return { ok: false, problem: `${snippet(type, 40)} event is for turn ${snippet(String(event.turn_id), 80)}, not ${turnId}` }
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
    case 'response.error': {
      const error = event.error ?? content
      const text = typeof error === 'string' ? error : JSON.stringify(error ?? 'no details')
      return {
        ok: true,
        event: { type: 'error', code: AgentErrorCode.BackendError, message: `backend reported an error: ${snippet(text)}` },
      }
    }
    default:
      return { ok: false, problem: `unknown event type ${snippet(type, 80)}` }
  }
}

/** Longest `to` or `digits` taken from a backend (the checks downstream quote them). */
const MAX_FIELD_CHARS = 512

/**
 * `response.transfer` `{ to, content?, caller_id?, headers? }`. Only the shape is checked here: whether `to` is a
 * valid target is the session's to judge (a bad one is reported back to the backend and the call goes on).
 */
function decodeTransfer(event: Record<string, unknown>): BackendEventResult {
  const { to, content, caller_id: callerId, headers } = event
  if (typeof to !== 'string' || to.length > MAX_FIELD_CHARS) return { ok: false, problem: 'response.transfer needs "to" as a string' }
  if (content !== undefined && content !== null && typeof content !== 'string') {
    return { ok: false, problem: 'response.transfer content must be a string' }
  }
  if (callerId !== undefined && typeof callerId !== 'string') return { ok: false, problem: 'response.transfer caller_id must be a string' }
  if (headers !== undefined && !isStringMap(headers)) return { ok: false, problem: 'response.transfer headers must map names to strings' }
  return {
    ok: true,
    event: { type: 'transfer', text: typeof content === 'string' ? content : '', to, callerId, headers },
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
  let value: unknown
  try {
    value = JSON.parse(data)
  } catch {
    return { ok: false, problem: `event data is not JSON: ${snippet(data, 80)}` }
  }
  return decodeBackendEvent(value, turnId)
}
