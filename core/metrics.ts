/**
 * What the gateway counts, as one small interface: the parts that see an event report it here, and only the
 * wiring knows it becomes Prometheus metrics (gateway/prometheus-metrics.ts). The pipeline never sees this: it
 * reports through its own contract and the session passes the figures on.
 */

/** How one agent or lifecycle webhook request ended. */
export type WebhookOutcome = 'delivered' | 'failed' | 'cancelled'

/** Everything the gateway reports; each method is cheap and never throws. */
export interface Metrics {
  /** A session started (its key was accepted and the pipeline is starting), by transport kind. */
  sessionStarted(channel: string): void
  /** A session or call was refused before it started, by transport kind and refusal reason. */
  sessionRefused(channel: string, reason: string): void
  /** A turn finished with a latency: its total and each stage's duration (ms). */
  turnLatency(totalMs: number, stages: readonly { name: string; duration_ms: number }[]): void
  /** A webhook request finished: `kind` is `agent` (turn requests) or `lifecycle` (session.* events). */
  webhookDelivery(kind: 'agent' | 'lifecycle', outcome: WebhookOutcome): void
  /** A call to the carrier's REST API failed, by operation and error code. */
  carrierApiError(operation: string, code: string): void
}

/** Counts nothing (tests, tools, and any caller that was given no metrics). */
export const NO_METRICS: Metrics = {
  sessionStarted: () => undefined,
  sessionRefused: () => undefined,
  turnLatency: () => undefined,
  webhookDelivery: () => undefined,
  carrierApiError: () => undefined,
}
