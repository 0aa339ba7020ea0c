/** Wire messages of `{ws_url}/v1/agents/web/websocket` (JSON text frames with a `type`). */

/** Messages the browser sends. */
export type ClientMessage =
  | { type: 'client.ready' }
  | { type: 'client.audio'; content: string }
  | { type: 'trigger.response.audio.replay_finished'; reason: 'completed'; turn_id: string }
  | { type: 'trigger.turn.start'; role: 'user' }
  | { type: 'trigger.turn.end'; role: 'user' }
  | { type: 'client.response.text'; content: string }
  | { type: 'client.response.data'; data: unknown }

/** Messages the gateway sends (unknown types are passed to `onMessage` untouched). */
export type ServerMessage =
  | { type: 'turn.start'; role: 'user' | 'assistant'; turn_id: string }
  | { type: 'turn.end'; role?: 'user' | 'assistant'; turn_id: string }
  | { type: 'response.audio'; content: string; delta_id: string; turn_id: string }
  | { type: 'response.text.delta'; content: string; turn_id: string }
  | { type: 'response.text'; content: string; turn_id: string }
  | { type: 'response.end'; turn_id: string }
  | { type: 'user.transcript.interim_delta'; content: string; turn_id: string; delta_counter: number }
  | { type: 'user.transcript.delta'; content: string; turn_id: string; delta_counter: number }
  | { type: 'user.transcript'; content: string; turn_id: string }
  | { type: 'response.data'; content: unknown; turn_id: string }
  | { type: 'error'; code?: string; message?: string; error?: string }

/** Frontend settings returned by authorize_session. */
export interface FrontendConfig {
  transcription?: { trigger?: 'automatic' | 'push_to_talk'; can_interrupt?: boolean; automatic?: boolean }
  vad?: Record<string, unknown>
  [key: string]: unknown
}

/** What the customer's backend returns after calling authorize_session for the browser. */
export interface Authorization {
  client_session_key: string
  conversation_id: string
  config?: FrontendConfig
}

/** What the SDK passes to the customer's authorize function; forward it to authorize_session. */
export interface AuthorizeRequest {
  /** Set on reconnect: the conversation to continue. */
  conversation_id?: string
  sdk_version: string
  metadata?: Record<string, unknown>
}

/** Parse a text frame into a server message; `undefined` when it is not a JSON object with a string `type`. */
export function parseServerMessage(text: string): ServerMessage | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined // not JSON: ignored like any unknown message
  }
  if (typeof value !== 'object' || value === null || typeof (value as { type?: unknown }).type !== 'string') return undefined
  return value as ServerMessage
}
