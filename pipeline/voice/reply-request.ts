import type { AgentEvent } from '../agent/agent-step.js'
import type { PipelineLogger } from '../runtime/logger.js'
import type { AssistantTurn } from './assistant-turn.js'
import { applyAgentEvent, type AgentEventSink } from './agent-events.js'
import type { PipelineEvent, PipelineHooks } from './pipeline-io.js'
import { FailureStreak, guardReply, HoldingPhrases, type ReplySafety } from './reply-safety.js'

/** Where a reply's events come from: the agent step's answer, or words already known. */
export type ReplySource = (signal: AbortSignal) => AsyncIterable<AgentEvent> | Iterable<AgentEvent>

/** What the agent's side of a reply needs from its pipeline. */
export interface ReplyRequestsDeps {
  /** Aborted when the session ends. */
  signal: AbortSignal
  /** Fallback speech, the reply timeout and the holding phrase; undefined: failures are only recorded. */
  safety: ReplySafety | undefined
  /** Says `text` in turn `a`; `fromAgent` false for the gateway's own words. */
  say(a: AssistantTurn, text: string, fromAgent: boolean): void
  /** Queues `response.dtmf` tones behind turn `a`'s speech. */
  queueDtmf(a: AssistantTurn, e: Extract<AgentEvent, { type: 'dtmf' }>): void
  emit(e: PipelineEvent): void
  hooks: PipelineHooks
  logger: PipelineLogger
  now(): number
  /** The replies were closed (the session is ending). */
  closed(): boolean
}

/**
 * The agent's side of each reply: reads its events into the turn (with the reply timeout and the holding phrase
 * for message turns), and decides what a reply that failed, said nothing, or needed a default line turns into;
 * consecutive failures lead to the fallback's farewell or transfer.
 */
export class ReplyRequests {
  readonly #d: ReplyRequestsDeps
  readonly #streak: FailureStreak | undefined
  readonly #holding: HoldingPhrases | undefined

  constructor(d: ReplyRequestsDeps) {
    this.#d = d
    this.#streak = d.safety === undefined ? undefined : new FailureStreak(d.safety.fallback)
    this.#holding = d.safety?.holding.enabled ? new HoldingPhrases(d.safety.holding.messages) : undefined
  }

  /**
   * Reads reply `a`'s events to their end; `requestKind` when it is an agent request, whose outcome the hooks are
   * told. False when the reply was cut off (interrupted, or the replies closed): nothing more is to be done with it.
   */
  async run(
    a: AssistantTurn,
    events: ReplySource,
    requestKind?: 'welcome' | 'message',
    /** Said when the reply had nothing speakable (a failed warm transfer: the caller must not hear silence). */
    defaultLine?: string,
  ): Promise<boolean> {
    // The turn's own controller, also aborted with the session (AbortSignal.any's composite signals can be
    // collected on Node 20 and then never fire).
    const onSessionAbort = () => a.abort.abort()
    this.#d.signal.addEventListener('abort', onSessionAbort, { once: true })
    // The agent request's own controller: the reply timeout ends the request without ending the turn.
    const request = new AbortController()
    const onTurnAbort = () => request.abort()
    a.abort.signal.addEventListener('abort', onTurnAbort, { once: true })
    const safety = requestKind === 'message' ? this.#d.safety : undefined
    const timers =
      safety === undefined
        ? []
        : guardReply(a, safety, {
            elapsedMs: this.#d.now() - (a.timings.userEndAt ?? this.#d.now()),
            holding: this.#holding,
            abortRequest: () => request.abort(),
            say: (text) => this.#d.say(a, text, false),
          })
    let failed = false
    const sink: AgentEventSink = {
      say: (text) => this.#d.say(a, text, true),
      queueDtmf: (dtmf) => this.#d.queueDtmf(a, dtmf),
      emit: (event) => this.#d.emit(event),
      logger: this.#d.logger,
      now: () => this.#d.now(),
    }
    try {
      for await (const e of events(request.signal)) {
        if (a.interrupted || this.#d.closed()) break
        if (applyAgentEvent(a, e, sink)) failed = true
      }
    } catch (err) {
      failed = true
      if (!request.signal.aborted) {
        this.#d.logger.error({ err, turn_id: a.turnId }, 'agent step failed')
        a.failure ??= { cause: 'invalid_stream', detail: 'the agent step failed', heard: null }
      }
    }
    for (const timer of timers) clearTimeout(timer)
    this.#d.signal.removeEventListener('abort', onSessionAbort)
    a.abort.signal.removeEventListener('abort', onTurnAbort)
    const cancelled = a.abort.signal.aborted || a.interrupted || this.#d.closed()
    if (!cancelled && requestKind === 'message' && a.failure === undefined && !a.agentSpoke && !a.hangup && a.transfer === undefined) {
      // Only keypad tones or data, or nothing at all: the caller would be left in silence.
      if (a.dtmf.length === 0) a.failure = { cause: 'empty_reply', detail: 'the reply ended with nothing to speak', heard: null }
    }
    if (!cancelled && defaultLine !== undefined && !a.agentSpoke && !a.hangup && a.transfer === undefined) {
      this.#d.say(a, defaultLine, false)
    }
    if (requestKind !== undefined) {
      const outcome = cancelled ? 'cancelled' : failed || a.failure !== undefined ? 'failed' : 'delivered'
      this.#d.hooks.agentRequestDone?.({ kind: requestKind, outcome })
    }
    if (a.interrupted || this.#d.closed()) return false
    if (requestKind === 'message') this.#fallBack(a)
    return true
  }

  /** A message turn is over on the agent's side: count it, and say the fallback when it failed. */
  #fallBack(a: AssistantTurn): void {
    const streak = this.#streak
    if (streak === undefined) return
    // Speech synthesis failing is not the agent's failure, and a fallback could not be spoken anyway.
    if (a.failure === undefined || a.failure.cause === 'tts_failed') {
      streak.succeeded()
      return
    }
    const speech = streak.failed()
    if (speech.next === 'hangup') a.hangup = true
    if (speech.next === 'transfer') a.transfer = { to: speech.to }
    this.#d.logger.info(
      { turn_id: a.turnId, cause: a.failure.cause, consecutive: streak.consecutive, next: speech.next },
      'agent turn failed: fallback spoken',
    )
    this.#d.say(a, speech.text, false)
    a.failure.heard = speech.text
  }
}
