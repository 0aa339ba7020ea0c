import type { GatewayConfig } from './config.js'
import type { Store } from '../gateway/store/database.js'
import type { Log } from '../core/log.js'
import type { MetricsSource } from '../core/metrics.js'
import type { SessionDeps } from '../gateway/sessions/session-deps.js'
import type { CallTimeouts } from '../gateway/admission/call-deps.js'
import type { RecordingSettings } from '../gateway/recording/session-recording.js'
import type { TunnelHub } from '../gateway/tunnels/tunnel-hub.js'
import type { BrowserAttach } from '../transports/browser/browser-upgrade.js'
import type { Carrier } from '../carrier/carrier.js'
import type { PrometheusMetrics } from './prometheus-metrics.js'

/** Carrier path tuning; every field has a default. */
export interface CarrierOptions extends CallTimeouts {
  /** The carrier implementation (default: Twilio-compatible). */
  carrier?: Carrier
  /** Measures the synchronous handling of each media-stream frame in ms (benchmarks). */
  frameTiming?: (ms: number) => void
}

/** What the process wires together. */
export interface GatewayDeps {
  config: GatewayConfig
  store: Store
  log: Log
  /** The relay of `voxgate tunnel` (made by startGateway; buildApp alone has no tunnel route without it). */
  tunnels?: TunnelHub
  /** Overrides of session behaviour (tests shorten minutes and webhook backoff). */
  sessionOverrides?: Partial<Pick<SessionDeps, 'minuteMs' | 'webhookDelivery' | 'createVad'>>
  /** Wires a connected browser socket to its session (the browser protocol). */
  attachBrowser?: BrowserAttach
  /** Carrier path tuning (the carrier implementation, waiting-call deadlines). */
  carrier?: CarrierOptions
  /** Replaces where recordings are written (tests force a storage failure with it). */
  recordingSink?: RecordingSettings['sink']
  /** What GET /metrics serves, given this process's metrics (default: those; a cluster worker serves all workers'). */
  metricsSource?: (own: PrometheusMetrics) => MetricsSource
  /** Wall clock in Unix ms of the organizations' request-rate buckets (default Date.now; tests move it by hand). */
  clock?: () => number
  /** Campaign dialer tuning: the clock calling windows are read by, the pause between ticks (tests). */
  campaigns?: { now?: () => Date; tickMs?: number }
}
