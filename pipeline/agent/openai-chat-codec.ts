import type { AgentLlmOptions } from '../options/agent-options.js'
import { snippet } from './agent-errors.js'
import type { HistoryItem } from './agent-step.js'

/** One message of an OpenAI-compatible chat completion request. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

/** The body of a streaming chat completion request. */
export interface ChatCompletionBody {
  model: string
  stream: true
  messages: ChatMessage[]
  temperature?: number
}

/**
 * The request for one user turn: the system prompt (when not empty), the last `max_history_turns` history items,
 * then the user's text.
 */
export function chatCompletionBody(options: AgentLlmOptions, history: readonly HistoryItem[], text: string): ChatCompletionBody {
  const messages: ChatMessage[] = []
  if (options.system_prompt.trim() !== '') messages.push({ role: 'system', content: options.system_prompt })
  for (const item of history.slice(-options.max_history_turns)) messages.push({ role: item.role, content: item.text })
  messages.push({ role: 'user', content: text })
  const body: ChatCompletionBody = { model: options.model_id, stream: true, messages }
  if (options.temperature !== undefined) body.temperature = options.temperature
  return body
}

/** What one `data:` payload of a chat completion stream means. */
export type ChatStreamItem =
  /** A content delta (possibly empty); `finished` when the chunk carries a finish_reason. */
  | { kind: 'delta'; text: string; finished: boolean }
  /** `[DONE]`: the stream is complete. */
  | { kind: 'done' }
  /** The endpoint reported an error inside the stream. */
  | { kind: 'error'; message: string }
  /** Not a chunk this decoder understands. */
  | { kind: 'bad'; problem: string }

/** Decodes one SSE `data` payload of a streaming chat completion (`chat.completion.chunk` objects, `[DONE]`). */
export function decodeChatStreamData(data: string): ChatStreamItem {
  if (data.trim() === '[DONE]') return { kind: 'done' }
  let value: unknown
  try {
    value = JSON.parse(data)
  } catch {
    return { kind: 'bad', problem: `chunk is not JSON: ${snippet(data, 80)}` }
  }
  if (typeof value !== 'object' || value === null) return { kind: 'bad', problem: 'chunk is not a JSON object' }
  const chunk = value as { error?: unknown; choices?: unknown }
  if (chunk.error !== undefined) return { kind: 'error', message: errorSummary(chunk.error) }
  if (!Array.isArray(chunk.choices)) return { kind: 'bad', problem: 'chunk has no choices array' }
  // Some endpoints send a final usage chunk with no choices.
  const choice = chunk.choices[0] as { delta?: { content?: unknown }; finish_reason?: unknown } | undefined
  const content = choice?.delta?.content
  if (content !== undefined && content !== null && typeof content !== 'string') {
    return { kind: 'bad', problem: 'delta content is not a string' }
  }
  const finished = typeof choice?.finish_reason === 'string'
  return { kind: 'delta', text: content ?? '', finished }
}

/** The assistant text of a non-streaming completion (endpoints that ignore `stream: true`), if there is one. */
export function completionText(value: unknown): string | undefined {
  const content = (value as { choices?: Array<{ message?: { content?: unknown } }> } | null)?.choices?.[0]?.message?.content
  return typeof content === 'string' ? content : undefined
}

/**
 * A short, secret-free summary of an OpenAI-style error object: its `code` or `type`, never its `message` (which
 * for a wrong key quotes part of the key).
 */
export function errorSummary(error: unknown): string {
  if (typeof error !== 'object' || error === null) return 'no details'
  const { code, type } = error as { code?: unknown; type?: unknown }
  if (typeof code === 'string' && code !== '') return snippet(code, 80)
  if (typeof type === 'string' && type !== '') return snippet(type, 80)
  return 'no details'
}
