import type { PreviousTurnLatency } from '../latency/latency-breakdown.js'
import type { TurnFailureCause } from './turn-failure.js'

/**
 * The agent step contract: a turn's input in, an async stream of response events out, cancellable with the
 * signal (barge-in aborts the in-flight request; no other signal is sent, as the SPEC says).
 */

/** What the agent is asked to answer. */
export type AgentRequest =
  /** The session began: the agent may speak first (webhook type `session.start`). */
  | { kind: 'welcome'; turnId: string }
  /** The user finished a turn (webhook type `message`). */
  | {
      kind: 'message'
      turnId: string
      text: string
      /** The session's previous turn and where its latency went, when it has a breakdown (webhook `previous_turn`). */
      previousTurn?: PreviousTurnLatency | undefined
    }
  /** The client sent data (webhook type `data`); answered with a plain JSON reply, not SSE. */
  | { kind: 'data'; turnId: string; data: unknown }
  /**
   * Answering machine detection decided what answered an outbound call (webhook type `machine_detection`, an
   * addition to the SPEC: `answered_by` is `human`, `machine`, `machine_beep` or `unknown`); answered like a turn.
   */
  | { kind: 'machine_detection'; turnId: string; answeredBy: string }
  /**
   * A warm transfer failed and the caller is back with the agent (webhook type `transfer.failed`, an addition to the
   * SPEC): `reason` (no_answer, busy, declined, ...) and the target `to`; answered like a turn.
   */
  | { kind: 'transfer_failed'; turnId: string; reason: string; to: string }

/** One earlier turn, for steps that keep conversation history (the built-in LLM). */
export interface HistoryItem {
  role: 'user' | 'assistant'
  text: string
}

/** Facts about the session every request carries. */
export interface AgentContext {
  sessionId: string
  conversationId: string
  fromPhoneNumber?: string | undefined
  toPhoneNumber?: string | undefined
  /** The agent answering; sent on `session.start`, as the lifecycle webhook's `agent_id`. */
  agentId?: string | undefined
  /** When the session started (ISO 8601); sent on `session.start`, as the lifecycle webhook's `started_at`. */
  startedAt?: string | undefined
  /** `session_webhook.custom_metadata`: the SPEC adds it to every webhook payload as `custom_metadata`. */
  customMetadata?: Record<string, unknown> | undefined
  /** The session's metadata (the config's, the authorization's merged over it); sent as `metadata` (`{}` when none). */
  metadata?: Record<string, unknown> | undefined
  /** The conversation so far, oldest first (includes earlier sessions of the conversation). */
  history: readonly HistoryItem[]
  /**
   * Set when the agent's `privacy.redact_webhooks` is on: what a `message` request's `text` becomes. Unset, the
   * backend gets the text as said (it may have to take the payment).
   */
  redactWebhookText?: ((text: string) => string) | undefined
}

/** What a step yields while answering. */
export type AgentEvent =
  /** The request left the gateway (latency: end of user speech -> webhook sent). */
  | { type: 'sent' }
  /** The first byte of the reply arrived (latency: webhook sent -> first reply byte). */
  | { type: 'first_byte' }
  /** Text to speak, as it arrives (never held back until the end). */
  | { type: 'tts'; text: string }
  /** Data for the client (`response.data`). */
  | { type: 'data'; content: unknown }
  /** The reply is complete. */
  | { type: 'end' }
  /** Speak `text`, then end the session. */
  | { type: 'hangup'; text: string }
  /**
   * Speak `text`, then hand the caller to `to` (`response.transfer`, an addition to the SPEC). The target is
   * passed on as given: the session checks it and knows whether its channel can transfer at all.
   */
  | { type: 'transfer'; text: string; to: string; callerId?: string | undefined; headers?: Record<string, string> | undefined }
  /** Play keypad tones after the speech before them (`response.dtmf`, an addition); `digits` as given. */
  | { type: 'dtmf'; digits: string; toneMs?: number | undefined; gapMs?: number | undefined }
  /**
   * Pause or resume the session's recording and transcript storage now (`response.recording`): for the
   * part of a call where the caller reads out payment details.
   */
  | { type: 'recording'; action: RecordingAction }
  /** The person on the call asked not to be called again (`response.dnc`, an addition): the session lists their number. */
  | { type: 'dnc' }
  /**
   * The turn failed (backend error, timeout, malformed reply); the turn ends, the session goes on. `cause` is the
   * failure's stored name when the step knows it better than its code says (see agentFailureCause). `message`
   * never quotes the target; `debugDetail` (agent.webhook's `debug_failures`, a target that is not private) is the
   * first line of what it said, for the stored failure detail only: it is never logged.
   */
  | { type: 'error'; code: string; message: string; cause?: TurnFailureCause | undefined; debugDetail?: string | undefined }

/** What `response.recording` asks for. */
export type RecordingAction = 'pause' | 'resume'

/** An agent step (`agent.webhook`, `agent.llm`). */
export interface AgentStep {
  /** Which request kinds the step handles; others are skipped by the caller (e.g. `data` when not enabled). */
  readonly handles: ReadonlySet<AgentRequest['kind']>
  /**
   * Answers one request. The stream always ends with exactly one of `end`, `hangup` or `error` unless the
   * signal aborts it, in which case it stops quietly without yielding further events.
   */
  respond(request: AgentRequest, context: AgentContext, options: { signal: AbortSignal }): AsyncIterable<AgentEvent>
}
