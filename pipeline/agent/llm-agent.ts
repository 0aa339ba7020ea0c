import type { AgentLlmOptions } from '../config/agent-options.js'
import { silentLogger, type PipelineLogger } from '../runtime/logger.js'
import { AgentErrorCode, type AgentErrorCodeValue } from './agent-errors.js'
import type { AgentContext, AgentEvent, AgentRequest, AgentStep } from './agent-step.js'
import { ExchangeError, HttpExchange, type ExchangeErrorCode, type FetchLike } from './http-exchange.js'
import { chatCompletionBody, completionText, decodeChatStreamData, errorSummary } from './openai-chat-codec.js'
import { SseDecoder, sseBatches } from './sse-decoder.js'
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
export interface LlmAgentDeps {
  /** Base URL of an OpenAI-compatible API, e.g. `https://api.openai.com/v1`. */
  baseUrl: string
  apiKey: string
  logger?: PipelineLogger | undefined
  fetch?: FetchLike | undefined
  limits?: Partial<LlmLimits> | undefined
}

const FAILURE_CODES: Record<Exclude<ExchangeErrorCode, 'aborted'>, AgentErrorCodeValue> = {
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
export class OpenAiLlmAgentStep implements AgentStep {
  /** @inheritdoc */
  readonly handles: ReadonlySet<AgentRequest['kind']> = new Set<AgentRequest['kind']>(['welcome', 'message'])
  readonly #options: AgentLlmOptions
  readonly #url: string
  readonly #apiKey: string
  readonly #logger: PipelineLogger
  readonly #fetch: FetchLike
  readonly #limits: LlmLimits

  constructor(options: AgentLlmOptions, deps: LlmAgentDeps) {
    this.#options = options
    this.#url = `${deps.baseUrl.replace(/\/+$/, '')}/chat/completions`
    this.#apiKey = deps.apiKey
    this.#logger = deps.logger ?? silentLogger
    this.#fetch = deps.fetch ?? ((input, init) => fetch(input, init))
    this.#limits = { ...LLM_LIMITS, ...deps.limits }
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
    const log: Log = (fields, message) => this.#logger.warn({ ...base, ...fields }, message)
    const body = JSON.stringify(chatCompletionBody(this.#options, context.history, request.text))
    const exchange = new HttpExchange(
      this.#fetch,
      { firstByteMs: this.#limits.firstByteMs, totalMs: this.#limits.totalMs, maxBytes: this.#limits.maxReplyBytes },
      { signal },
    )
    try {
      const pending = exchange.send(this.#url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.#apiKey}`,
          'content-type': 'application/json',
          accept: 'text/event-stream',
        },
        body,
      })
      yield { type: 'sent' }
      const response = await pending
      if (signal.aborted) return
      if (response.status < 200 || response.status > 299) {
        exchange.markFirstByte()
        const text = await exchange.peek(response, 4096)
        if (signal.aborted) return
        yield fail(log, AgentErrorCode.LlmHttpError, `LLM endpoint replied HTTP ${response.status}${httpDetail(text)}`)
        return
      }
      if (/^application\/json\b/i.test(response.headers.get('content-type') ?? '')) {
        exchange.markFirstByte()
        yield { type: 'first_byte' }
        yield* this.#readCompletion(exchange, response, signal, log)
      } else {
        yield* this.#readStream(exchange, response, signal, log)
      }
    } catch (error) {
      if (!(error instanceof ExchangeError)) throw error
      if (error.code === 'aborted' || signal.aborted) return
      yield fail(log, FAILURE_CODES[error.code], error.message)
    } finally {
      exchange.close()
    }
  }

  async *#readStream(exchange: HttpExchange, response: Response, signal: AbortSignal, log: Log): AsyncGenerator<AgentEvent> {
    const decoder = new SseDecoder({ maxEventChars: this.#limits.maxEventChars })
    const words = new WordCoalescer()
    let gotBytes = false
    let finished = false
    for await (const { events, overflow } of sseBatches(exchange.text(response), decoder)) {
      if (signal.aborted) return
      if (!gotBytes && exchange.bytesRead > 0) {
        gotBytes = true
        yield { type: 'first_byte' }
      }
      for (const data of events) {
        if (data.trim() === '') continue
        const item = decodeChatStreamData(data)
        if (signal.aborted) return
        if (item.kind === 'done') {
          yield* finish(words)
          return
        }
        if (item.kind === 'error') {
          yield fail(log, AgentErrorCode.LlmBadStream, `LLM stream reported an error: ${item.message}`)
          return
        }
        if (item.kind === 'bad') {
          yield fail(log, AgentErrorCode.LlmBadStream, item.problem)
          return
        }
        const text = words.push(item.text)
        if (text !== '') yield { type: 'tts', text }
        finished ||= item.finished
      }
      if (overflow) {
        yield fail(log, AgentErrorCode.LlmBadStream, `a stream chunk exceeds ${decoder.maxEventChars} characters`)
        return
      }
    }
    if (signal.aborted) return
    // Some compatible servers omit [DONE]; a finish_reason already said the answer is complete.
    if (finished) yield* finish(words)
    else yield fail(log, AgentErrorCode.LlmBadStream, 'LLM stream ended before [DONE]')
  }

  async *#readCompletion(exchange: HttpExchange, response: Response, signal: AbortSignal, log: Log): AsyncGenerator<AgentEvent> {
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
