import { fanOutMetrics, type Metrics } from '../core/metrics.js'
import { observeSharedVad } from '../pipeline/index.js'
import type { GatewayConfig } from './config.js'
import { PrometheusMetrics } from './prometheus-metrics.js'

/** The process's metrics (what GET /metrics serves), its turn traces when configured, and what everything counts into. */
export interface Observability {
  readonly metrics: PrometheusMetrics
  /** The metrics, and the traces' when tracing: what sessions and calls report to. */
  readonly reported: Metrics
  /** True when turn traces are exported (OTEL_EXPORTER_OTLP_ENDPOINT is set). */
  readonly tracing: boolean
  /** Stops observing the shared VAD. */
  stop(): void
  /** Flushes and stops the traces. */
  shutdown(): Promise<void>
}

/** Starts the metrics; `liveChannels` lists the channel of each live session (a gauge reads it when scraped). */
export async function startObservability(config: GatewayConfig, liveChannels: () => Iterable<string>): Promise<Observability> {
  const metrics = new PrometheusMetrics(liveChannels)
  const stopVadMetrics = observeSharedVad(metrics.vad)
  // Loaded only when configured: without an endpoint no OpenTelemetry SDK code is imported.
  const tracing =
    config.otlpEndpoint === undefined ? undefined : (await import('./otel-turn-traces.js')).startTurnTracing(config.otlpEndpoint)
  return {
    metrics,
    reported: tracing === undefined ? metrics : fanOutMetrics(metrics, tracing.metrics),
    tracing: tracing !== undefined,
    stop: stopVadMetrics,
    shutdown: async () => {
      await tracing?.shutdown()
    },
  }
}
