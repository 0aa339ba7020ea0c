import { isLoopbackHost } from '../options/webhook-url.js'
import { silentLogger, type PipelineLogger } from '../runtime/logger.js'
import type { AgentErrorCodeValue } from './agent-errors.js'
import type { AgentContext, AgentEvent, AgentRequest, AgentStep } from './agent-step.js'
import { ExchangeError, type ExchangeErrorCode, type ExchangeLimits, type FetchLike, globalFetch, HttpExchange } from './http-exchange.js'
import { SseDecoder, sseBatches } from './sse-decoder.js'
import { exchangeFailureCause, type TurnFailureCause } from './turn-failure.js'

/** What an HTTP agent step takes besides its own settings; all optional, for tests and embedders. */
export interface HttpAgentStepDeps<Limits> {
  logger?: PipelineLogger | undefined
  /** Default: the global fetch. */
  fetch?: FetchLike | undefined
  /** Overrides of the step's default limits. */
  limits?: Partial<Limits> | undefined
  /**
   * Whether a request to `url` reached (or would reach) a private address, asked after it failed: the gateway's
   * egress policy knows. A failure there tells nothing the target said and one word for any connection failure.
   * Default: loopback hosts (127.0.0.0/8, ::1, localhost) are private.
   */
  privateTarget?: ((url: string) => boolean) | undefined
}

/** Without the gateway's knowledge, the hosts that are private whatever the network: loopback. */
function loopbackTarget(url: string): boolean {
  try {
    return isLoopbackHost(new URL(url).hostname)
  } catch {
    return true
  }
}

/** The agent error code each exchange failure becomes; an aborted exchange ends quietly instead. */
export type ExchangeFailureCodes = Readonly<Record<Exclude<ExchangeErrorCode, 'aborted'>, AgentErrorCodeValue>>

/**
 * One step's side of an exchange: what it sends and how it reads the answer. Everything else (deadlines, abort,
 * the `sent` event, non-2xx replies, failures, closing the connection) is {@link HttpAgentStep.exchange}'s.
 */
export interface AgentWire {
  url: string
  init: Omit<RequestInit, 'signal' | 'redirect'>
  limits: ExchangeLimits
  failureCodes: ExchangeFailureCodes
  /** Characters of a non-2xx body read for the error report (0: none is read). */
  errorBodyChars: number
  /** The error event (logged by the step) for a non-2xx reply, from its status and the start of its body. */
  httpError(status: number, body: string): AgentEvent
  /** The error event (logged by the step) for a failed exchange. */
  fail(code: AgentErrorCodeValue, message: string): AgentEvent
  /** The events of a 2xx reply, `first_byte` included. */
  reply(exchange: HttpExchange, response: Response): AsyncIterable<AgentEvent>
}

/**
 * Base of the agent steps that answer over one HTTP request per turn (`agent.webhook`, `agent.llm` openai). It owns
 * the exchange loop, so a step only maps its wire: the request it sends and how it decodes the reply.
 */
export abstract class HttpAgentStep<Limits extends object> implements AgentStep {
  /** @inheritdoc */
  abstract readonly handles: ReadonlySet<AgentRequest['kind']>
  protected readonly logger: PipelineLogger
  /** The step's defaults with the deps' overrides. */
  protected readonly limits: Readonly<Limits>
  readonly #fetch: FetchLike
  readonly #privateTarget: (url: string) => boolean

  protected constructor(deps: HttpAgentStepDeps<Limits>, defaults: Readonly<Limits>) {
    this.logger = deps.logger ?? silentLogger
    this.#fetch = deps.fetch ?? globalFetch
    this.#privateTarget = deps.privateTarget ?? loopbackTarget
    this.limits = { ...defaults, ...deps.limits }
  }

  /** Whether `url` is a private target (see {@link HttpAgentStepDeps.privateTarget}). */
  protected isPrivateTarget(url: string): boolean {
    return this.#privateTarget(url)
  }

  /** @inheritdoc */
  abstract respond(request: AgentRequest, context: AgentContext, options: { signal: AbortSignal }): AsyncIterable<AgentEvent>

  /**
   * One request and its reply as agent events: `sent` as soon as the request is issued, then the step's reading
   * of a 2xx reply, or a single `error` for a non-2xx status, a deadline, the size bound or a broken connection.
   * An aborted signal ends the events quietly. The connection is closed however iteration ends.
   */
  protected async *exchange(wire: AgentWire, signal: AbortSignal): AsyncGenerator<AgentEvent> {
    const exchange = new HttpExchange(this.#fetch, wire.limits, { signal })
    try {
      const pending = exchange.send(wire.url, wire.init)
      yield { type: 'sent' }
      const response = await pending
      if (signal.aborted) return
      if (response.status < 200 || response.status > 299) {
        exchange.markFirstByte()
        const text = wire.errorBodyChars > 0 ? await exchange.peek(response, wire.errorBodyChars) : ''
        if (signal.aborted) return
        yield withCause(wire.httpError(response.status, text), `http_${response.status}`)
        return
      }
      yield* wire.reply(exchange, response)
    } catch (error) {
      if (!(error instanceof ExchangeError)) throw error
      if (error.code === 'aborted' || signal.aborted) return
      // On a private target even the fixed words would tell a closed port from an open one: one word for all. An
      // egress refusal is the policy's answer, decided before connecting, so it tells nothing about the port.
      const code = error.code
      const hidden = code === 'unreachable' && error.words !== 'refused by the egress policy' && this.#privateTarget(wire.url)
      const message = hidden ? 'request failed: connection failed' : error.message
      yield withCause(wire.fail(wire.failureCodes[code], message), exchangeFailureCause(code, hidden ? 'connection failed' : error.words))
    } finally {
      exchange.close()
    }
  }
}

/** What an SSE reply holds for a step, in order. */
export type SseReplyItem =
  /** The first body byte arrived (headers alone do not count: a framework may flush them before the answer). */
  | { type: 'first_byte' }
  /** The data of one event; blank data (a keep-alive some servers send) is skipped. */
  | { type: 'data'; data: string }
  /** An event, or an unterminated line, grew past `maxEventChars`; nothing after it is read. */
  | { type: 'overflow'; maxEventChars: number }

/** Reads an SSE reply body as {@link SseReplyItem}s until it ends, overflows or the signal aborts. */
export async function* sseReply(
  exchange: HttpExchange,
  response: Response,
  maxEventChars: number,
  signal: AbortSignal,
): AsyncGenerator<SseReplyItem> {
  const decoder = new SseDecoder({ maxEventChars })
  let gotBytes = false
  for await (const { events, overflow } of sseBatches(exchange.text(response), decoder)) {
    if (signal.aborted) return
    if (!gotBytes && exchange.bytesRead > 0) {
      gotBytes = true
      yield { type: 'first_byte' }
    }
    for (const data of events) {
      if (data.trim() !== '') yield { type: 'data', data }
    }
    if (overflow) {
      yield { type: 'overflow', maxEventChars }
      return
    }
  }
}

/** `event` with the failure's cause, when it is an error. */
function withCause(event: AgentEvent, cause: TurnFailureCause): AgentEvent {
  return event.type === 'error' ? { ...event, cause } : event
}
