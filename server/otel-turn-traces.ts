/**
 * Turn traces over OTLP/HTTP with the official OpenTelemetry SDK: one span per turn, from the end of the user's
 * speech to the first audio heard, with a child span per latency stage. The wiring imports this module only when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set, so without it no OpenTelemetry SDK code is loaded.
 */
import { ROOT_CONTEXT, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { NO_METRICS, type Metrics, type TurnIdentity, type TurnStage, type WarmTransferOutcome } from '../core/metrics.js'

/** The traces side of the metrics, and how to flush and stop it. */
export interface TurnTracing {
  metrics: Metrics
  /** Sends what is buffered and stops; idempotent. */
  shutdown(): Promise<void>
}

/** Starts exporting turn spans to `endpoint` (the OTLP base URL; `/v1/traces` is appended, as the spec says). */
export function startTurnTracing(endpoint: string): TurnTracing {
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` })
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'voxgate' }),
    // Bounded: at most 2,048 spans wait for export; beyond that the SDK drops them.
    spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 2048, scheduledDelayMillis: 2000 })],
  })
  const tracer = provider.getTracer('voxgate')
  let stopped: Promise<void> | undefined
  return {
    metrics: {
      ...NO_METRICS,
      turnLatency: (totalMs, stages, turn) => traceTurn(tracer, totalMs, stages, turn),
      warmTransfer: (transfer) => traceWarmTransfer(tracer, transfer),
    },
    shutdown() {
      stopped ??= provider.shutdown()
      return stopped
    },
  }
}

/** One turn as a span with a child per stage, placed on the wall clock from the turn's origin. */
function traceTurn(tracer: Tracer, totalMs: number, stages: readonly TurnStage[], turn: TurnIdentity) {
  const origin = turn.origin.getTime()
  const root = tracer.startSpan('voice.turn', {
    startTime: origin,
    attributes: { 'voxgate.session_id': turn.sessionId, 'voxgate.turn_id': turn.turnId, 'voxgate.latency_ms': totalMs },
  })
  if (turn.failureCause !== undefined) {
    // A failed turn: its span runs to the fallback the caller heard, and says why.
    root.setAttribute('voxgate.failure_cause', turn.failureCause)
    root.setStatus({ code: SpanStatusCode.ERROR, message: turn.failureCause })
  }
  const parent = trace.setSpan(ROOT_CONTEXT, root)
  // The origin stage is the turn span's start; every later stage runs from the stage before to its own moment.
  for (const s of stages.slice(1)) {
    tracer.startSpan(s.name, { startTime: origin + s.at_ms - s.duration_ms }, parent).end(origin + s.at_ms)
  }
  root.end(origin + totalMs)
}

/** A warm transfer attempt as a span from its start to its bridge or failure, with the human's answer as an event. */
function traceWarmTransfer(tracer: Tracer, transfer: WarmTransferOutcome) {
  const start = transfer.startedAt.getTime()
  const span = tracer.startSpan('voice.warm_transfer', {
    startTime: start,
    attributes: { 'voxgate.session_id': transfer.sessionId, 'voxgate.transfer.outcome': transfer.outcome },
  })
  if (transfer.answeredAfterMs !== undefined) {
    span.setAttribute('voxgate.transfer.answered_after_ms', transfer.answeredAfterMs)
    span.addEvent('human answered', start + transfer.answeredAfterMs)
  }
  if (transfer.outcome !== 'connected') span.setStatus({ code: SpanStatusCode.ERROR, message: transfer.outcome })
  span.end(start + transfer.endedAfterMs)
}
