import type { WebhookStepOptions } from '../options/agent-options.js'
import { signedHeaders } from './signed-request.js'
import { AgentErrorCode, snippet, type AgentErrorCodeValue } from './agent-errors.js'
import type { AgentContext, AgentEvent, AgentRequest } from './agent-step.js'
import { decodeBackendEvent, decodeBackendEventText, isTerminal, type BackendEventResult } from './backend-event.js'
import { type ExchangeFailureCodes, HttpAgentStep, type HttpAgentStepDeps, sseReply } from './http-agent-step.js'
import type { HttpExchange } from './http-exchange.js'
import { MAX_JSON_DEPTH, jsonNestsDeeperThan } from '../runtime/json-depth.js'
import type { TurnFailureCause } from './turn-failure.js'
import { webhookRequestBody } from './webhook-body.js'

/** Size limits of a backend reply. */
export interface WebhookReplyLimits {
  /** Most characters in one SSE event (its joined data, or an unterminated line). */
  maxEventChars: number
  /** Most bytes in the whole reply body. */
  maxReplyBytes: number
  /** Most characters of an error reply's first line kept in the failure detail (`debug_failures` only). */
  maxErrorSnippetChars: number
}

/** Default {@link WebhookReplyLimits}: 64 KiB per event, 1 MiB per reply, 200 characters of an error body's line. */
export const WEBHOOK_REPLY_LIMITS: Readonly<WebhookReplyLimits> = {
  maxEventChars: 64 * 1024,
  maxReplyBytes: 1024 * 1024,
  maxErrorSnippetChars: 200,
}

/** What {@link WebhookAgentStep} needs besides its options. */
export interface WebhookAgentDeps extends HttpAgentStepDeps<WebhookReplyLimits> {
  /** The agent's `webhook_secret`, which signs every request. */
  webhookSecret: string
  /**
   * `session_webhook.custom_headers`, which the SPEC sends with every webhook request, agent requests included.
   * The step's own `custom_headers` win a clash: they were set for this endpoint.
   */
  sessionHeaders?: Record<string, string> | undefined
}

const FAILURE_CODES: ExchangeFailureCodes = {
  first_byte_timeout: AgentErrorCode.Timeout,
  total_timeout: AgentErrorCode.Timeout,
  too_large: AgentErrorCode.TooLarge,
  unreachable: AgentErrorCode.Unreachable,
  cut_off: AgentErrorCode.Incomplete,
}

type Log = (level: 'debug' | 'warn', fields: object, message: string) => void

/** The request being answered, as the reply readers need it. */
interface Turn {
  request: AgentRequest
  signal: AbortSignal
  log: Log
  /** Whether a failure may quote what the target said (see WebhookAgentStep's #quotable). */
  quotable: () => boolean
}

/**
 * `agent.webhook`: each turn is a signed JSON POST to the customer backend, answered with an SSE stream of
 * `response.*` events (or, for `data` requests, a plain JSON reply). Text is yielded the moment it arrives.
 */
export class WebhookAgentStep extends HttpAgentStep<WebhookReplyLimits> {
  /** @inheritdoc */
  readonly handles: ReadonlySet<AgentRequest['kind']>
  readonly #options: WebhookStepOptions
  readonly #secret: string
  readonly #customHeaders: Record<string, string>

  constructor(options: WebhookStepOptions, deps: WebhookAgentDeps) {
    super(deps, WEBHOOK_REPLY_LIMITS)
    this.#options = options
    this.#secret = deps.webhookSecret
    this.#customHeaders = withHeaders(deps.sessionHeaders, options.custom_headers)
    // The option names are the request kinds: `welcome`, `message`, `data`.
    this.handles = new Set<AgentRequest['kind']>(options.events)
  }

  /** @inheritdoc */
  async *respond(request: AgentRequest, context: AgentContext, options: { signal: AbortSignal }): AsyncGenerator<AgentEvent> {
    const { signal } = options
    if (signal.aborted) return
    const base = { sessionId: context.sessionId, turnId: request.turnId, request: request.kind }
    const log: Log = (level, fields, message) => this.logger[level]({ ...base, ...fields }, message)
    const body = JSON.stringify(webhookRequestBody(request, context))
    const acceptType = request.kind === 'data' ? 'application/json' : 'text/event-stream'
    const headers = signedHeaders(this.#secret, body, this.#customHeaders, { accept: acceptType })
    const quotable = () => this.#quotable()
    yield* this.exchange(
      {
        url: this.#options.url,
        init: { method: 'POST', headers, body },
        limits: {
          firstByteMs: this.#options.time_to_first_byte_ms,
          totalMs: this.#options.timeout_ms,
          maxBytes: this.limits.maxReplyBytes,
        },
        failureCodes: FAILURE_CODES,
        // The body is read only when it may be shown: one character more than is kept, so a cut line says so.
        errorBodyChars: this.#options.debug_failures === true ? this.limits.maxErrorSnippetChars + 1 : 0,
        httpError: (status, text) => {
          // The status and a fixed reason: a target's body may be an internal service's secret.
          const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : ''
          const line = quotable() ? firstLine(text, this.limits.maxErrorSnippetChars) : ''
          return fail(log, AgentErrorCode.HttpError, `backend replied HTTP ${status}${redirect}`, undefined, line)
        },
        fail: (code, message) => fail(log, code, message),
        reply: (exchange, response) => this.#readReply(exchange, response, { request, signal, log, quotable }),
      },
      signal,
    )
  }

  /**
   * Whether a failure's stored detail may quote what the target said: only under `debug_failures`, and never from a
   * private address (asked once the request was answered, when the address it reached is known).
   */
  #quotable(): boolean {
    return this.#options.debug_failures === true && !this.isPrivateTarget(this.#options.url)
  }

  /** A 2xx reply in the format its status and content type say (see the README: which reply format). */
  async *#readReply(exchange: HttpExchange, response: Response, turn: Turn): AsyncGenerator<AgentEvent> {
    const type = response.headers.get('content-type')?.toLowerCase() ?? ''
    const json = /^application\/([\w.+-]*\+)?json\b/.test(type)
    if (response.status === 204 || response.status === 205) {
      exchange.markFirstByte()
      yield { type: 'first_byte' }
      yield { type: 'end' }
    } else if (type.startsWith('text/event-stream') || (!json && turn.request.kind !== 'data')) {
      yield* this.#readEventStream(exchange, response, turn)
    } else {
      exchange.markFirstByte()
      yield { type: 'first_byte' }
      const text = await exchange.readAll(response)
      if (turn.signal.aborted) return
      yield* this.#replayJson(text, turn)
    }
  }

  async *#readEventStream(exchange: HttpExchange, response: Response, turn: Turn): AsyncGenerator<AgentEvent> {
    const { request, signal, log } = turn
    let gotBytes = false
    let delivered = false
    for await (const item of sseReply(exchange, response, this.limits.maxEventChars, signal)) {
      if (item.type === 'first_byte') {
        gotBytes = true
        yield item
        continue
      }
      if (item.type === 'overflow') {
        yield fail(log, AgentErrorCode.TooLarge, `an event exceeds ${item.maxEventChars} characters`)
        return
      }
      const event = accept(decodeBackendEventText(item.data, request.turnId), turn)
      if (signal.aborted) return
      if (event === undefined) continue
      yield event
      if (isTerminal(event)) return
      delivered = true
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
    const type = response.headers.get('content-type') ?? ''
    if (!type.toLowerCase().startsWith('text/event-stream') && gotBytes) {
      // Read leniently as SSE in case it was one, but nothing in it was: a body of another kind.
      const what = type === '' ? 'reply is without a content type, not text/event-stream' : 'reply is not text/event-stream'
      const quoted = type === '' || !turn.quotable() ? '' : `content type ${snippet(type, 60)}`
      yield fail(log, AgentErrorCode.BadEvent, what, 'invalid_stream', quoted)
      return
    }
    const what = gotBytes ? 'without response.end or response.hangup' : 'with an empty body'
    yield fail(log, AgentErrorCode.Incomplete, `reply stream ended ${what}`, 'empty_reply')
  }

  *#replayJson(text: string, turn: Turn): Generator<AgentEvent> {
    const { request, signal, log } = turn
    if (text.trim() === '') {
      yield { type: 'end' }
      return
    }
    if (jsonNestsDeeperThan(text)) {
      yield fail(log, AgentErrorCode.BadEvent, `JSON reply nests deeper than ${MAX_JSON_DEPTH} levels`)
      return
    }
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      yield fail(log, AgentErrorCode.BadEvent, 'JSON reply is not valid JSON', undefined, turn.quotable() ? snippet(text, 80) : '')
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
      const event = accept(decodeBackendEvent(item, request.turnId), turn)
      if (signal.aborted) return
      if (event === undefined) continue
      yield event
      if (isTerminal(event)) return
    }
    // A JSON reply is complete by construction: its end is the end of the turn.
    yield { type: 'end' }
  }
}

/** `base` with `over` laid on top; names compare case-insensitively, as HTTP's do, so a clash sends one header. */
function withHeaders(base: Record<string, string> | undefined, over: Record<string, string> | undefined): Record<string, string> {
  const overridden = new Set(Object.keys(over ?? {}).map((name) => name.toLowerCase()))
  const merged: Record<string, string> = {}
  for (const [name, value] of Object.entries(base ?? {})) if (!overridden.has(name.toLowerCase())) merged[name] = value
  return Object.assign(merged, over)
}

/** The event to yield for a decoded backend event, or undefined to skip it (empty text); logs what it repairs. */
function accept(result: BackendEventResult, turn: Turn): AgentEvent | undefined {
  const { log } = turn
  if (!result.ok) return fail(log, AgentErrorCode.BadEvent, result.problem, undefined, turn.quotable() ? result.quoted : '')
  if (result.note !== undefined) log('warn', {}, result.note)
  if (result.event.type === 'error') log('warn', { code: result.event.code }, result.event.message)
  if (result.event.type === 'tts' && result.event.text === '') return undefined
  return result.event
}

/**
 * The error event of a failed turn, logged here once (the backend's own error is logged by accept()). `debugDetail`
 * (what the target said, under `debug_failures`) goes to the event for the stored detail, never to the log.
 */
function fail(log: Log, code: AgentErrorCodeValue, message: string, cause?: TurnFailureCause, debugDetail = ''): AgentEvent {
  if (code !== AgentErrorCode.BackendError) log('warn', { code }, message)
  const event: AgentEvent = cause === undefined ? { type: 'error', code, message } : { type: 'error', code, message, cause }
  return debugDetail === undefined || debugDetail === '' ? event : { ...event, debugDetail }
}

/** The first line of `text`, control characters stripped, at most `maxChars` (and an ellipsis when cut). */
export function firstLine(text: string, maxChars: number): string {
  const [line = ''] = text.split(/\r\n|\r|\n/, 1)
  return snippet(line, maxChars)
}
