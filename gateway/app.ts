import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { Duplex } from 'node:stream'
import type { AddressInfo } from 'node:net'
import Koa from 'koa'
import Router from '@koa/router'
import { vendorAvailability, type GatewayConfig } from './config.js'
import type { Store } from './store/database.js'
import type { Log } from '../core/log.js'
import { fanOutMetrics } from '../core/metrics.js'
import { maskKeyInPath } from '../core/log.js'
import { SessionManager } from './sessions/session-manager.js'
import type { SessionDeps } from './sessions/call-session.js'
import { browserUpgradeHandler, BROWSER_WS_PATH, type BrowserAttach } from './browser/browser-upgrade.js'
import { refuseUpgrade } from './http/upgrade-refusal.js'
import { staticClient } from './http/static-client.js'
import { errorHandler } from '../api/http/error-handler.js'
import { adminRouter } from '../api/routes/admin.js'
import { agentsRouter } from '../api/routes/agents.js'
import { sessionsRouter } from '../api/routes/sessions.js'
import { recordingsRouter } from '../api/routes/recordings.js'
import type { RecordingSettings } from './sessions/recording/session-recording.js'
import { RecordingRetention } from './sessions/recording/retention.js'
import { healthRouter } from '../api/routes/health.js'
import { requireApiKey, type ApiState } from '../api/auth.js'
import { carrierHooksRouter } from '../api/routes/carrier-hooks.js'
import { outboundCallsRouter } from '../api/routes/outbound-calls.js'
import { agentLinkSessionsRouter, agentLinksRouter } from '../api/routes/agent-links.js'
import type { Carrier } from '../carrier/carrier.js'
import { mediaStreamUpgradeHandler } from '../carrier/media-stream/media-stream-upgrade.js'
import { createTwilioCarrier } from '../carrier/twilio/twilio-carrier.js'
import { createCallDeps, type CallDeps, type CallTimeouts } from './sessions/call-deps.js'
import { metricsRouter } from '../api/routes/metrics.js'
import { docsRouter } from '../api/routes/docs.js'
import { openApiDocument } from '../api/openapi/openapi-document.js'
import { observeSharedVad } from '../pipeline/contract.js'
import { PrometheusMetrics } from './prometheus-metrics.js'
import { withCarrierMetrics } from './carrier-metrics.js'

/** How long closing waits for upgraded sockets to finish their close handshakes. */
const SERVER_CLOSE_WAIT_MS = 2_000

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
  /** Overrides of session behaviour (tests shorten minutes and webhook backoff). */
  sessionOverrides?: Partial<Pick<SessionDeps, 'minuteMs' | 'webhookDelivery' | 'createVad'>>
  /** Wires a connected browser socket to its session (the browser protocol). */
  attachBrowser?: BrowserAttach
  /** Carrier path tuning (the carrier implementation, waiting-call deadlines). */
  carrier?: CarrierOptions
  /** Replaces where recordings are written (tests force a storage failure with it). */
  recordingSink?: RecordingSettings['sink']
}

/** A running gateway: its HTTP server and how to stop it. */
export interface Gateway {
  server: Server
  /** The koa application serving every HTTP route. */
  app: Koa
  /** Base URL it listens on (127.0.0.1 with the real port when bound to all interfaces). */
  url: string
  sessions: SessionManager
  /** The process's metrics, as `GET /metrics` serves them. */
  metrics: PrometheusMetrics
  /** True when turn traces are exported (OTEL_EXPORTER_OTLP_ENDPOINT is set). */
  tracing: boolean
  /**
   * Stops taking new sessions at once, lets live ones go on for up to `graceMs` (default 0: ends them now),
   * ends the rest with `shutdown`, then closes the server. The server keeps answering meanwhile: `/readyz`
   * says 503 and the carrier's callbacks for live calls still land. Idempotent (the first `graceMs` holds).
   */
  close(graceMs?: number): Promise<void>
}

/** The process's carrier, and what its calls share with sessions. */
export interface CarrierPath {
  carrier: Carrier
  calls: CallDeps
}

/** The one place a carrier is chosen: everything below gets it passed in. */
function carrierPath(deps: GatewayDeps, sessions: SessionManager): CarrierPath {
  const carrier = withCarrierMetrics(deps.carrier?.carrier ?? createTwilioCarrier(), sessions.metrics)
  const calls = createCallDeps(
    {
      db: deps.store.db,
      log: deps.log,
      carrier,
      sessions,
      allowInsecureWebhooks: deps.config.allowInsecureWebhooks,
      webhookDelivery: deps.sessionOverrides?.webhookDelivery,
    },
    deps.carrier,
  )
  return { carrier, calls }
}

/** Builds the koa application with every route. */
export function buildApp(
  deps: GatewayDeps,
  sessions: SessionManager,
  path: CarrierPath = carrierPath(deps, sessions),
  metrics: PrometheusMetrics = new PrometheusMetrics(() => []),
): Koa {
  const { config, store, log } = deps
  const app = new Koa({ proxy: config.trustProxy })
  app.silent = true
  app.use(errorHandler(log))

  const health = healthRouter({ store, isDraining: () => sessions.isDraining })
  app.use(health.routes())
  app.use(metricsRouter({ source: metrics, token: config.metricsToken }).routes())
  app.use(docsRouter({ document: openApiDocument(config.publicUrl) }).routes())
  // The demo page at / and its scripts under /client/ (client/dist).
  app.use(staticClient({ log }))

  const admin = adminRouter({ db: store.db, adminToken: config.adminToken, log })
  app.use(admin.routes()).use(admin.allowedMethods({ throw: true }))

  // Signed by the carrier, not behind the API key.
  const carrierHooks = carrierHooksRouter({ calls: path.calls, carrier: path.carrier, publicUrl: config.publicUrl })
  app.use(carrierHooks.routes()).use(carrierHooks.allowedMethods({ throw: true }))

  // Authorized by an agent link's token, not by an API key.
  const linkDeps = { db: store.db, publicUrl: config.publicUrl, allowInsecureWebhooks: config.allowInsecureWebhooks }
  const linkSessions = agentLinkSessionsRouter(linkDeps)
  app.use(linkSessions.routes()).use(linkSessions.allowedMethods({ throw: true }))

  const v1 = new Router<ApiState>()
  v1.use('/v1', requireApiKey(store.db))
  // Fixed paths (/v1/agents/web/...) are registered before /v1/agents/:agent_id so they win.
  const sessionRoutes = sessionsRouter({
    db: store.db,
    allowInsecureWebhooks: config.allowInsecureWebhooks,
    liveUsage: (id) => sessions.live.get(id)?.usageSoFar(),
    endSession: (id) => sessions.endAnywhere(id, 'hangup'),
  })
  const agents = agentsRouter({ db: store.db, vendors: vendorAvailability(config), allowInsecureWebhooks: config.allowInsecureWebhooks })
  v1.use(sessionRoutes.routes(), sessionRoutes.allowedMethods({ throw: true }))
  const recordings = recordingsRouter({ db: store.db })
  v1.use(recordings.routes(), recordings.allowedMethods({ throw: true }))
  const outbound = outboundCallsRouter({ calls: path.calls, publicUrl: config.publicUrl })
  v1.use(outbound.routes(), outbound.allowedMethods({ throw: true }))
  v1.use(agents.routes(), agents.allowedMethods({ throw: true }))
  const links = agentLinksRouter(linkDeps)
  v1.use(links.routes(), links.allowedMethods({ throw: true }))
  app.use(v1.routes())
  return app
}

/** Starts the HTTP server (REST and WebSocket upgrades) and the session manager. */
export async function startGateway(deps: GatewayDeps): Promise<Gateway> {
  const { config, store, log } = deps
  const metrics = new PrometheusMetrics(() => [...sessions.live.values()].map((s) => s.channel))
  const stopVadMetrics = observeSharedVad(metrics.vad)
  // Loaded only when configured: without an endpoint no OpenTelemetry SDK code is imported.
  const tracing =
    config.otlpEndpoint === undefined ? undefined : (await import('./otel-turn-traces.js')).startTurnTracing(config.otlpEndpoint)
  const sessions: SessionManager = new SessionManager(
    {
      metrics: tracing === undefined ? metrics : fanOutMetrics(metrics, tracing.metrics),
      db: store.db,
      log,
      allowInsecureWebhooks: config.allowInsecureWebhooks,
      usageRatePerMinute: config.usageRatePerMinute,
      vendors: { sttVendorA: config.sttVendorA, sttVendorB: config.sttVendorB, ttsVendorA: config.ttsVendorA, llm: config.llm },
      recording: { maskDtmf: config.recordingDtmfMask, publicUrl: config.publicUrl, sink: deps.recordingSink },
      ...deps.sessionOverrides,
    },
    config.leaseTtlMs,
    store.notifications,
  )
  await sessions.start()
  const retention =
    config.recordingRetentionDays === undefined ? undefined : new RecordingRetention(store.db, log, config.recordingRetentionDays)
  retention?.start()
  const path = carrierPath(deps, sessions)
  const app = buildApp(deps, sessions, path, metrics)
  const server = createServer(app.callback())
  server.requestTimeout = 60_000
  server.headersTimeout = 15_000

  const browser = browserUpgradeHandler({
    sessions,
    log,
    trustProxy: config.trustProxy,
    attach: deps.attachBrowser ?? (() => undefined),
  })
  const mediaStream = mediaStreamUpgradeHandler({
    carrier: path.carrier,
    calls: path.calls,
    trustProxy: config.trustProxy,
    frameTiming: deps.carrier?.frameTiming,
  })
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined)
    const url = new URL(req.url ?? '/', 'http://gateway.invalid')
    if (url.pathname === BROWSER_WS_PATH) {
      void browser(req, socket, head, url)
      return
    }
    if (url.pathname.startsWith(path.carrier.mediaStream.pathPrefix)) {
      void mediaStream(req, socket, head, url)
      return
    }
    log.debug({ path: maskKeyInPath(url.pathname) }, 'upgrade to unknown path refused')
    refuseUpgrade(socket, 404, `no WebSocket endpoint at ${maskKeyInPath(url.pathname)}`)
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(config.port, config.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const addr = server.address() as AddressInfo
  const host = addr.address === '0.0.0.0' || addr.address === '::' ? '127.0.0.1' : addr.address
  let closing: Promise<void> | undefined
  return {
    server,
    app,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`,
    sessions,
    metrics,
    tracing: tracing !== undefined,
    close(graceMs = 0) {
      closing ??= (async () => {
        await sessions.shutdown(graceMs)
        path.calls.watchdog.stop()
        retention?.stop()
        stopVadMetrics()
        const closed = new Promise<void>((resolve) => server.close(() => resolve()))
        server.closeAllConnections()
        // A socket whose peer never answers the close handshake must not hold the exit (ws waits 30 s).
        let timer: NodeJS.Timeout | undefined
        await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, SERVER_CLOSE_WAIT_MS)))])
        clearTimeout(timer)
        await tracing?.shutdown()
      })()
      return closing
    },
  }
}
