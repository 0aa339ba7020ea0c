/**
 * What the gateway counts, as one small interface: the parts that see an event report it here, and only the
 * wiring knows it becomes Prometheus metrics (server/prometheus-metrics.ts). The pipeline never sees this: it
 * reports through its own contract and the session passes the figures on.
 */

/** One stage of a turn's latency breakdown. */
export interface TurnStage {
  name: string
  at_ms: number
  duration_ms: number
}

/** The turn a latency belongs to; `failureCause` when it failed (its latency then runs to the fallback heard). */
export interface TurnIdentity {
  sessionId: string
  turnId: string
  origin: Date
  failureCause?: string | undefined
}

/** A warm transfer attempt that ended: bridged (`connected`) or failed with its reason; ms since it started. */
export interface WarmTransferOutcome {
  sessionId: string
  startedAt: Date
  /** `connected`, or the failure reason (`no_answer`, `busy`, `declined`, `voicemail`, `failed`, `timeout`, `caller_hung_up`). */
  outcome: string
  answeredAfterMs: number | undefined
  endedAfterMs: number
}

/** How one agent or lifecycle webhook request ended. */
export type WebhookOutcome = 'delivered' | 'failed' | 'cancelled'

/** Everything the gateway reports; each method is cheap and never throws. */
export interface Metrics {
  /** A session started (its key was accepted and the pipeline is starting), by transport kind. */
  sessionStarted(channel: string): void
  /** A session or call was refused before it started, by transport kind and refusal reason. */
  sessionRefused(channel: string, reason: string): void
  /**
   * A turn finished with a latency: its total and its stages (ms after `turn.origin`, the end of the user's
   * speech, and after the stage before).
   */
  turnLatency(totalMs: number, stages: readonly TurnStage[], turn: TurnIdentity): void
  /** A turn failed (the agent's backend, or speech synthesis), by cause (`http_500`, `timeout`, ...). */
  turnFailed(cause: string): void
  /** A webhook request finished: `kind` is `agent` (turn requests) or `lifecycle` (session.* events). */
  webhookDelivery(kind: 'agent' | 'lifecycle', outcome: WebhookOutcome): void
  /** A call to the carrier's REST API failed, by operation and error code. */
  carrierApiError(operation: string, code: string): void
  /** A warm transfer attempt ended: counted by outcome, and a span in the traces. */
  warmTransfer(transfer: WarmTransferOutcome): void
}

/** Counts nothing (tests, tools, and any caller that was given no metrics). */
export const NO_METRICS: Metrics = {
  sessionStarted: () => undefined,
  sessionRefused: () => undefined,
  turnLatency: () => undefined,
  turnFailed: () => undefined,
  webhookDelivery: () => undefined,
  carrierApiError: () => undefined,
  warmTransfer: () => undefined,
}

/** Reports to every one of `targets` (Prometheus and, when configured, traces). */
export function fanOutMetrics(...targets: Metrics[]): Metrics {
  return {
    sessionStarted: (channel) => {
      for (const m of targets) m.sessionStarted(channel)
    },
    sessionRefused: (channel, reason) => {
      for (const m of targets) m.sessionRefused(channel, reason)
    },
    turnLatency: (totalMs, stages, turn) => {
      for (const m of targets) m.turnLatency(totalMs, stages, turn)
    },
    turnFailed: (cause) => {
      for (const m of targets) m.turnFailed(cause)
    },
    webhookDelivery: (kind, outcome) => {
      for (const m of targets) m.webhookDelivery(kind, outcome)
    },
    carrierApiError: (operation, code) => {
      for (const m of targets) m.carrierApiError(operation, code)
    },
    warmTransfer: (transfer) => {
      for (const m of targets) m.warmTransfer(transfer)
    },
  }
}

/** What GET /metrics serves: the scrape text and its content type (one process's registry, or a cluster's aggregate). */
export interface MetricsSource {
  render(): Promise<string>
  readonly contentType: string
}
