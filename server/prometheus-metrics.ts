import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import type { Metrics, TurnStage, WarmTransferOutcome, WebhookOutcome } from '../core/metrics.js'
import type { VadObserver } from '../pipeline/index.js'
import type { SipDropReason } from '../transports/sip/endpoint/sip-drop-counter.js'
import type { SipEndpointMetrics } from '../transports/sip/endpoint/sip-endpoint.js'

/** Turn latencies run from tens of ms (a stage) to seconds (a slow backend); buckets in seconds. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10]
/** VAD batches hold 1 to maxBatch (32 by default) frames. */
const VAD_BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128]
/** Channels always reported, so a dashboard sees 0 rather than no series. */
const CHANNELS = ['browser', 'carrier', 'sip'] as const

/**
 * The gateway's metrics in one prom-client registry of its own (not the global one, so two gateways in one
 * process, as in tests, never mix): the `Metrics` the parts report to, the VAD observer, Node's default metrics
 * (event loop delay, GC, memory), and the text a scrape returns.
 */
export class PrometheusMetrics implements Metrics {
  readonly registry = new Registry()
  readonly #starts: Counter<'channel'>
  readonly #refusals: Counter<'channel' | 'reason'>
  readonly #turnLatency: Histogram
  readonly #stageDuration: Histogram<'stage'>
  readonly #webhooks: Counter<'kind' | 'outcome'>
  readonly #turnFailures: Counter<'cause'>
  readonly #warmTransfers: Counter<'outcome'>
  readonly #carrierErrors: Counter<'operation' | 'code'>
  readonly #vadBatch: Histogram
  readonly #vadSkipped: Counter
  readonly #sipDropped: Counter<'reason'>
  readonly #sipMediaTimeouts: Counter

  /** `liveSessions` lists the channel of every live session, read at each scrape. */
  constructor(liveSessions: () => Iterable<string>) {
    const registers = [this.registry]
    collectDefaultMetrics({ register: this.registry })
    new Gauge({
      name: 'voxgate_live_sessions',
      help: 'Sessions connected on this process (on every worker under serve --workers), by channel',
      labelNames: ['channel'],
      registers,
      collect() {
        this.reset()
        for (const c of CHANNELS) this.set({ channel: c }, 0)
        for (const c of liveSessions()) this.inc({ channel: c })
      },
    })
    this.#starts = new Counter({
      name: 'voxgate_session_starts_total',
      help: 'Sessions started, by channel',
      labelNames: ['channel'],
      registers,
    })
    this.#refusals = new Counter({
      name: 'voxgate_session_refusals_total',
      help: 'Sessions and calls refused before they started, by channel and reason',
      labelNames: ['channel', 'reason'],
      registers,
    })
    this.#turnLatency = new Histogram({
      name: 'voxgate_turn_latency_seconds',
      help: "Turn latency: end of the user's speech to the first audio heard (the breakdown's total)",
      buckets: LATENCY_BUCKETS,
      registers,
    })
    this.#stageDuration = new Histogram({
      name: 'voxgate_turn_stage_duration_seconds',
      help: 'Time each stage of a turn took after the stage before (the latency breakdown)',
      labelNames: ['stage'],
      buckets: LATENCY_BUCKETS,
      registers,
    })
    this.#webhooks = new Counter({
      name: 'voxgate_webhook_deliveries_total',
      help: 'Webhook requests by kind (agent turn requests, lifecycle events) and final outcome',
      labelNames: ['kind', 'outcome'],
      registers,
    })
    this.#turnFailures = new Counter({
      name: 'voxgate_turn_failures_total',
      help: 'Turns that failed and got a fallback instead of the agent reply, by cause (http_500, timeout, connect_refused, ...)',
      labelNames: ['cause'],
      registers,
    })
    this.#warmTransfers = new Counter({
      name: 'voxgate_warm_transfers_total',
      help: 'Warm transfer attempts that ended, by outcome (connected, or why it failed: no_answer, busy, declined, ...)',
      labelNames: ['outcome'],
      registers,
    })
    this.#carrierErrors = new Counter({
      name: 'voxgate_carrier_api_errors_total',
      help: "Failed calls to the carrier's REST API, by operation and error code",
      labelNames: ['operation', 'code'],
      registers,
    })
    this.#vadBatch = new Histogram({
      name: 'voxgate_vad_batch_size',
      help: 'Frames per VAD model call (all calls of the process share the model)',
      buckets: VAD_BATCH_BUCKETS,
      registers,
    })
    this.#vadSkipped = new Counter({
      name: 'voxgate_vad_skipped_frames_total',
      help: 'Caller frames treated as silence without inference because the VAD model fell behind',
      registers,
    })
    this.#sipDropped = new Counter({
      name: 'voxgate_sip_dropped_total',
      help: 'SIP messages that never reached the SIP request handler, by reason (scanner, rate_limited, malformed, ...)',
      labelNames: ['reason'],
      registers,
    })
    this.#sipMediaTimeouts = new Counter({
      name: 'voxgate_sip_media_timeouts_total',
      help: 'SIP calls hung up because the peer sent no RTP or RTCP for SIP_MEDIA_TIMEOUT_S (end reason media_timeout)',
      registers,
    })
  }

  sessionStarted(channel: string): void {
    this.#starts.inc({ channel })
  }

  sessionRefused(channel: string, reason: string): void {
    this.#refusals.inc({ channel, reason })
  }

  turnLatency(totalMs: number, stages: readonly TurnStage[]): void {
    this.#turnLatency.observe(totalMs / 1000)
    // The origin stage (always 0) says nothing.
    for (const s of stages.slice(1)) this.#stageDuration.observe({ stage: s.name }, s.duration_ms / 1000)
  }

  turnFailed(cause: string): void {
    this.#turnFailures.inc({ cause })
  }

  warmTransfer(transfer: WarmTransferOutcome): void {
    this.#warmTransfers.inc({ outcome: transfer.outcome })
  }

  webhookDelivery(kind: 'agent' | 'lifecycle', outcome: WebhookOutcome): void {
    this.#webhooks.inc({ kind, outcome })
  }

  carrierApiError(operation: string, code: string): void {
    this.#carrierErrors.inc({ operation, code })
  }

  /** Hears the process's VAD batcher. */
  readonly vad: VadObserver = {
    batch: (size) => this.#vadBatch.observe(size),
    skipped: (frames) => this.#vadSkipped.inc(frames),
  }

  /** Hears the SIP endpoint. */
  readonly sip: SipEndpointMetrics = {
    dropped: (reason: SipDropReason) => this.#sipDropped.inc({ reason }),
    mediaTimeout: () => this.#sipMediaTimeouts.inc(),
  }

  /** The scrape: Prometheus text exposition format. */
  render(): Promise<string> {
    return this.registry.metrics()
  }

  get contentType(): string {
    return this.registry.contentType
  }
}
