import type { AgentWebhookOptions } from '../config/agent-options.js'
import { silentLogger, type PipelineLogger } from '../runtime/logger.js'
import { signedHeaders } from '../webhook/signed-request.js'
import { AgentErrorCode, snippet, type AgentErrorCodeValue } from './agent-errors.js'
import type { AgentContext, AgentEvent, AgentRequest, AgentStep } from './agent-step.js'
import { decodeBackendEvent, decodeBackendEventText, isTerminal, type BackendEventResult } from './backend-event.js'
import { ExchangeError, HttpExchange, type ExchangeErrorCode, type FetchLike } from './http-exchange.js'
import { SseDecoder, sseBatches } from './sse-decoder.js'
import { webhookRequestBody } from './webhook-body.js'

/** Size limits of a backend reply. */
export interface WebhookReplyLimits {
  /** Most characters in one SSE event (its joined data, or an unterminated line). */
  maxEventChars: number
  /** Most bytes in the whole reply body. */
  maxReplyBytes: number
  /** Most characters of an error reply's body quoted in the error message. */
  maxErrorSnippetChars: number
}

/** Default {@link WebhookReplyLimits}: 64 KiB per event, 1 MiB per reply, 200 characters of an error body. */
export const WEBHOOK_REPLY_LIMITS: Readonly<WebhookReplyLimits> = {
  maxEventChars: 64 * 1024,
  maxReplyBytes: 1024 * 1024,
  maxErrorSnippetChars: 200,
}

/** What {@link WebhookAgentStep} needs besides its options. */
export interface WebhookAgentDeps {
  /** The agent's `webhook_secret`, which signs every request. */
  webhookSecret: string
  logger?: PipelineLogger | undefined
  fetch?: FetchLike | undefined
  limits?: Partial<WebhookReplyLimits> | undefined
}

const FAILURE_CODES: Record<Exclude<ExchangeErrorCode, 'aborted'>, AgentErrorCodeValue> = {
  first_byte_timeout: AgentErrorCode.Timeout,
  total_timeout: AgentErrorCode.Timeout,
  too_large: AgentErrorCode.TooLarge,
  unreachable: AgentErrorCode.Unreachable,
  cut_off: AgentErrorCode.Incomplete,
}

type Log = (level: 'debug' | 'warn', fields: object, message: string) => void

/**
 * `agent.webhook`: each turn is a signed JSON POST to the customer backend, answered with an SSE stream of
 * `response.*` events (or, for `data` requests, a plain JSON reply). Text is yielded the moment it arrives.
 */
export class WebhookAgentStep implements AgentStep {
  /** @inheritdoc */
  readonly handles: ReadonlySet<AgentRequest['kind']>
  readonly #options: AgentWebhookOptions
  readonly #secret: string
  readonly #logger: PipelineLogger
  readonly #fetch: FetchLike
  readonly #limits: WebhookReplyLimits

  constructor(options: AgentWebhookOptions, deps: WebhookAgentDeps) {
    this.#options = options
    this.#secret = deps.webhookSecret
    this.#logger = deps.logger ?? silentLogger
    this.#fetch = deps.fetch ?? ((input, init) => fetch(input, init))
    this.#limits = { ...WEBHOOK_REPLY_LIMITS, ...deps.limits }
    // The option names are the request kinds: `welcome`, `message`, `data`.
    this.handles = new Set<AgentRequest['kind']>(options.events)
  }

  /** @inheritdoc */
  async *respond(request: AgentRequest, context: AgentContext, options: { signal: AbortSignal }): AsyncGenerator<AgentEvent> {
    const { signal } = options
    if (signal.aborted) return
    const base = { sessionId: context.sessionId, turnId: request.turnId, request: request.kind }
    const log: Log = (level, fields, message) => this.#logger[level]({ ...base, ...fields }, message)
    const body = JSON.stringify(webhookRequestBody(request, context))
    const acceptType = request.kind === 'data' ? 'application/json' : 'text/event-stream'
    const headers = signedHeaders(this.#secret, body, this.#options.custom_headers, { accept: acceptType })
    const exchange = new HttpExchange(
      this.#fetch,
      {
        firstByteMs: this.#options.time_to_first_byte_ms,
        totalMs: this.#options.timeout_ms,
        maxBytes: this.#limits.maxReplyBytes,
      },
      { signal },
    )
    try {
      const pending = exchange.send(this.#options.url, { method: 'POST', headers, body })
      yield { type: 'sent' }
      const response = await pending
      if (signal.aborted) return
      if (response.status < 200 || response.status > 299) {
        exchange.markFirstByte()
        // One character more than is quoted, so the excerpt shows that it was cut.
        const text = await exchange.peek(response, this.#limits.maxErrorSnippetChars + 1)
        if (signal.aborted) return
        const redirect = response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : ''
        const detail = text.trim() === '' ? '' : `: ${snippet(text, this.#limits.maxErrorSnippetChars)}`
        yield fail(log, AgentErrorCode.HttpError, `backend replied HTTP ${response.status}${redirect}${detail}`)
        return
      }
      const type = response.headers.get('content-type')?.toLowerCase() ?? ''
      const json = /^application\/([\w.+-]*\+)?json\b/.test(type)
      if (response.status === 204 || response.status === 205) {
        exchange.markFirstByte()
        yield { type: 'first_byte' }
        yield { type: 'end' }
      } else if (type.startsWith('text/event-stream') || (!json && request.kind !== 'data')) {
        yield* this.#readEventStream(exchange, response, request, signal, log)
      } else {
        exchange.markFirstByte()
        yield { type: 'first_byte' }
        const text = await exchange.readAll(response)
        if (signal.aborted) return
        yield* this.#replayJson(text, request, signal, log)
      }
    } catch (error) {
      if (!(error instanceof ExchangeError)) throw error
      if (error.code === 'aborted' || signal.aborted) return
      yield fail(log, FAILURE_CODES[error.code], error.message)
    } finally {
      exchange.close()
    }
  }

  async *#readEventStream(
    exchange: HttpExchange,
    response: Response,
    request: AgentRequest,
    signal: AbortSignal,
    log: Log,
  ): AsyncGenerator<AgentEvent> {
    const turnId = request.turnId
    const decoder = new SseDecoder({ maxEventChars: this.#limits.maxEventChars })
    let gotBytes = false
    let delivered = false
    for await (const { events, overflow } of sseBatches(exchange.text(response), decoder)) {
      if (signal.aborted) return
      if (!gotBytes && exchange.bytesRead > 0) {
        gotBytes = true
        yield { type: 'first_byte' }
      }
      for (const data of events) {
        // A blank `data:` line is a keep-alive some servers send, not an event.
        if (data.trim() === '') continue
        const event = accept(decodeBackendEventText(data, turnId), log)
        if (signal.aborted) return
        if (event === undefined) continue
        yield event
        if (isTerminal(event)) return
        delivered = true
      }
      if (overflow) {
        yield fail(log, AgentErrorCode.TooLarge, `an event exceeds ${decoder.maxEventChars} characters`)
        return
      }
    }
    if (signal.aborted) return
    if (!gotBytes && request.kind === 'welcome') {
      // A backend that shares its session webhook endpoint may acknowledge session.start with an empty 200.
      log('debug', {}, 'empty reply to session.start; the agent does not speak first')
      yield { type: 'end' }
      return
    }
    if (delivered) {
      // The backend closed the stream cleanly after speaking: a missing response.end is a slip, not a failure.
      log('warn', {}, 'reply stream ended without response.end; treated as the end of the turn')
      yield { type: 'end' }
      return
    }
    const what = gotBytes ? 'without response.end or response.hangup' : 'with an empty body'
    yield fail(log, AgentErrorCode.Incomplete, `reply stream ended ${what}`)
  }

  *#replayJson(text: string, request: AgentRequest, signal: AbortSignal, log: Log): Generator<AgentEvent> {
    if (text.trim() === '') {
      yield { type: 'end' }
      return
    }
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      yield fail(log, AgentErrorCode.BadEvent, `JSON reply is not valid JSON: ${snippet(text, 80)}`)
      return
    }
    let items: unknown[]
    if (Array.isArray(value)) {
      items = value
    } else if (typeof value === 'object' && value !== null && 'type' in value) {
      items = [value]
    } else if (request.kind === 'data' || request.kind === 'welcome') {
      // The SPEC's plain JSON reply to a data request: its `content`, if any, goes to the client. A welcome
      // acknowledged with plain JSON (`{}`, as to a lifecycle webhook) means the agent does not speak first.
      if (request.kind === 'data' && typeof value === 'object' && value !== null && 'content' in value) {
        yield { type: 'data', content: (value as { content: unknown }).content }
      } else {
        log('debug', {}, 'JSON reply carries no event or content; nothing forwarded')
      }
      yield { type: 'end' }
      return
    } else {
      yield fail(log, AgentErrorCode.BadEvent, 'JSON reply is neither an event nor an array of events')
      return
    }
    for (const item of items) {
      const event = accept(decodeBackendEvent(item, request.turnId), log)
      if (signal.aborted) return
      if (event === undefined) continue
      yield event
      if (isTerminal(event)) return
    }
    // A JSON reply is complete by construction: its end is the end of the turn.
    yield { type: 'end' }
  }
}

/** The event to yield for a decoded backend event, or undefined to skip it (empty text); logs what it repairs. */
function accept(result: BackendEventResult, log: Log): AgentEvent | undefined {
  if (!result.ok) return fail(log, AgentErrorCode.BadEvent, result.problem)
  if (result.note !== undefined) log('warn', {}, result.note)
  if (result.event.type === 'error') log('warn', { code: result.event.code }, result.event.message)
  if (result.event.type === 'tts' && result.event.text === '') return undefined
  return result.event
}

function fail(log: Log, code: AgentErrorCodeValue, message: string): AgentEvent {
  // The backend's own error is logged by accept(); everything else is logged here, once.
  if (code !== AgentErrorCode.BackendError) log('warn', { code }, message)
  return { type: 'error', code, message }
}
