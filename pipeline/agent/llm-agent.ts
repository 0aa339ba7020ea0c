import type { AgentLlmOptions } from '../options/agent-options.js'
import { AgentErrorCode, type AgentErrorCodeValue } from './agent-errors.js'
import type { AgentContext, AgentEvent, AgentRequest } from './agent-step.js'
import { type ExchangeFailureCodes, HttpAgentStep, type HttpAgentStepDeps, sseReply } from './http-agent-step.js'
import type { HttpExchange } from './http-exchange.js'
import { chatCompletionBody, completionText, decodeChatStreamData, errorSummary } from './openai-chat-codec.js'
import { WordCoalescer } from './word-coalescer.js'

/** Deadlines and size limits of one completion. */
export interface LlmLimits {
  firstByteMs: number
  totalMs: number
  maxEventChars: number
  maxReplyBytes: number
}

/** Default {@link LlmLimits}: 10 s to the first byte, 60 s in all, 64 KiB per chunk, 2 MiB per completion. */
export const LLM_LIMITS: Readonly<LlmLimits> = {
  firstByteMs: 10_000,
  totalMs: 60_000,
  maxEventChars: 64 * 1024,
  maxReplyBytes: 2 * 1024 * 1024,
}

/** What {@link OpenAiLlmAgentStep} needs besides its options. */
export interface LlmAgentDeps extends HttpAgentStepDeps<LlmLimits> {
  /** Base URL of an OpenAI-compatible API, e.g. `https://api.openai.com/v1`. */
  baseUrl: string
  apiKey: string
}

const FAILURE_CODES: ExchangeFailureCodes = {
  first_byte_timeout: AgentErrorCode.LlmTimeout,
  total_timeout: AgentErrorCode.LlmTimeout,
  too_large: AgentErrorCode.LlmBadStream,
  unreachable: AgentErrorCode.LlmUnreachable,
  cut_off: AgentErrorCode.LlmBadStream,
}

type Log = (fields: object, message: string) => void

/**
 * `agent.llm` with provider `openai`: streaming chat completions from any OpenAI-compatible endpoint. Deltas are
 * spoken word by word as they arrive; the welcome turn speaks `welcome_message` without calling the model.
 */
export class OpenAiLlmAgentStep extends HttpAgentStep<LlmLimits> {
  /** @inheritdoc */
  readonly handles: ReadonlySet<AgentRequest['kind']> = new Set<AgentRequest['kind']>(['welcome', 'message'])
  readonly #options: AgentLlmOptions
  readonly #url: string
  readonly #apiKey: string

  constructor(options: AgentLlmOptions, deps: LlmAgentDeps) {
    super(deps, LLM_LIMITS)
    this.#options = options
    this.#url = `${deps.baseUrl.replace(/\/+$/, '')}/chat/completions`
    this.#apiKey = deps.apiKey
  }

  /** @inheritdoc */
  async *respond(request: AgentRequest, context: AgentContext, options: { signal: AbortSignal }): AsyncGenerator<AgentEvent> {
    const { signal } = options
    if (signal.aborted) return
    if (request.kind !== 'message') {
      // Welcome: the configured line, no model call. Data requests are not handled; answer them with nothing.
      const welcome = request.kind === 'welcome' ? this.#options.welcome_message : ''
      if (welcome.trim() !== '') yield { type: 'tts', text: welcome }
      if (!signal.aborted) yield { type: 'end' }
      return
    }
    const base = { sessionId: context.sessionId, turnId: request.turnId, model: this.#options.model_id }
    const log: Log = (fields, message) => this.logger.warn({ ...base, ...fields }, message)
    yield* this.exchange(
      {
        url: this.#url,
        init: {
          method: 'POST',
          headers: { authorization: `Bearer ${this.#apiKey}`, 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify(chatCompletionBody(this.#options, context.history, request.text)),
        },
        limits: { firstByteMs: this.limits.firstByteMs, totalMs: this.limits.totalMs, maxBytes: this.limits.maxReplyBytes },
        failureCodes: FAILURE_CODES,
        // Enough for an OpenAI error object, of which only the code and type are reported.
        errorBodyChars: 4096,
        httpError: (status, body) => fail(log, AgentErrorCode.LlmHttpError, `LLM endpoint replied HTTP ${status}${httpDetail(body)}`),
        fail: (code, message) => fail(log, code, message),
        reply: (exchange, response) =>
          /^application\/json\b/i.test(response.headers.get('content-type') ?? '')
            ? this.#readCompletion(exchange, response, signal, log)
            : this.#readStream(exchange, response, signal, log),
      },
      signal,
    )
  }

  async *#readStream(exchange: HttpExchange, response: Response, signal: AbortSignal, log: Log): AsyncGenerator<AgentEvent> {
    const words = new WordCoalescer()
    let finished = false
    for await (const item of sseReply(exchange, response, this.limits.maxEventChars, signal)) {
      if (item.type === 'first_byte') {
        yield item
        continue
      }
      if (item.type === 'overflow') {
        yield fail(log, AgentErrorCode.LlmBadStream, `a stream chunk exceeds ${item.maxEventChars} characters`)
        return
      }
      const chunk = decodeChatStreamData(item.data)
      if (signal.aborted) return
      if (chunk.kind === 'done') {
        yield* finish(words)
        return
      }
      if (chunk.kind === 'error') {
        yield fail(log, AgentErrorCode.LlmBadStream, `LLM stream reported an error: ${chunk.message}`)
        return
      }
      if (chunk.kind === 'bad') {
        yield fail(log, AgentErrorCode.LlmBadStream, chunk.problem)
        return
      }
      const text = words.push(chunk.text)
      if (text !== '') yield { type: 'tts', text }
      finished ||= chunk.finished
    }
    if (signal.aborted) return
    // Some compatible servers omit [DONE]; a finish_reason already said the answer is complete.
    if (finished) yield* finish(words)
    else yield fail(log, AgentErrorCode.LlmBadStream, 'LLM stream ended before [DONE]')
  }

  /** An endpoint that ignored `stream: true`: one JSON completion, whose headers already count as the first byte. */
  async *#readCompletion(exchange: HttpExchange, response: Response, signal: AbortSignal, log: Log): AsyncGenerator<AgentEvent> {
    exchange.markFirstByte()
    yield { type: 'first_byte' }
    const text = await exchange.readAll(response)
    if (signal.aborted) return
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      yield fail(log, AgentErrorCode.LlmBadStream, 'LLM reply is not valid JSON')
      return
    }
    const content = completionText(value)
    if (content === undefined) {
      yield fail(log, AgentErrorCode.LlmBadStream, 'LLM reply has no choices[0].message.content')
      return
    }
    if (content !== '') yield { type: 'tts', text: content }
    yield { type: 'end' }
  }
}

function* finish(words: WordCoalescer): Generator<AgentEvent> {
  const rest = words.flush()
  if (rest !== '') yield { type: 'tts', text: rest }
  yield { type: 'end' }
}

/** The error code or type of an OpenAI-style error body, never its message (it may quote the key). */
function httpDetail(body: string): string {
  try {
    const error = (JSON.parse(body) as { error?: unknown } | null)?.error
    return error === undefined ? '' : ` (${errorSummary(error)})`
  } catch {
    // Not JSON (or cut at the peek limit): the status alone is the report.
    return ''
  }
}

function fail(log: Log, code: AgentErrorCodeValue, message: string): AgentEvent {
  log({ code }, message)
  return { type: 'error', code, message }
}
