/**
 * One event of the agent's reply applied to its assistant turn: timings, speech to say, a farewell or transfer to
 * carry out when heard, keypad tones, and what passes straight to the session (recording, DNC, data); an error is
 * the turn's failure. The reply's request (`ReplyRequests`) reads the events and stops at an interruption.
 */
import type { AgentEvent } from '../agent/agent-step.js'
import type { WarmTransferCommand } from '../agent/backend-event.js'
import { agentFailureCause, failureDetail, withDebugDetail } from '../agent/turn-failure.js'
import type { PipelineLogger } from '../runtime/logger.js'
import type { AssistantTurn } from './assistant-turn.js'
import type { PipelineEvent } from './pipeline-io.js'

/** What an event can do beyond the turn itself. */
export interface AgentEventSink {
  /** Says the agent's text in the turn (to the client and to TTS). */
  say(text: string): void
  queueDtmf(event: Extract<AgentEvent, { type: 'dtmf' }>): void
  emit(event: PipelineEvent): void
  readonly logger: PipelineLogger
  now(): number
}

/** Applies `e` to the reply `a`; true when it was an error (the reply failed). */
export function applyAgentEvent(a: AssistantTurn, e: AgentEvent, sink: AgentEventSink): boolean {
  switch (e.type) {
    case 'sent':
      a.timings.sentAt = sink.now()
      break
    case 'first_byte':
      a.timings.firstByteAt = sink.now()
      break
    case 'tts':
    case 'hangup':
    case 'transfer':
      if (e.type === 'hangup') a.hangup = true
      if (e.type === 'transfer') {
        const warm = (e as { warm?: WarmTransferCommand }).warm
        a.transfer = { to: e.to, callerId: e.callerId, headers: e.headers, ...(warm !== undefined && { warm }) }
      }
      if (e.text !== '') sink.say(e.text)
      break
    case 'dtmf':
      sink.queueDtmf(e)
      break
    case 'recording':
      sink.emit({ type: 'recording', turnId: a.turnId, action: e.action })
      break
    case 'dnc':
      sink.emit({ type: 'dnc', turnId: a.turnId })
      break
    case 'data':
      sink.emit({ type: 'data', turnId: a.turnId, content: e.content })
      break
    case 'error':
      // What the target said (debug_failures) reaches the stored detail only, never the log line below.
      a.failure ??= { cause: agentFailureCause(e), detail: failureDetail(withDebugDetail(e)), heard: null }
      sink.logger.warn({ code: e.code, turn_id: a.turnId }, `agent turn failed: ${e.message}`)
      return true
    case 'end':
      break
  }
  return false
}
