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
import { carrierTransferer } from './sessions/call-transfer.js'
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
import { RecordingMover } from './sessions/recording/recording-mover.js'
import type { RecordingObjectStore } from './sessions/recording/object-store.js'
import { EgressPolicy, type WebhookEgress } from './webhooks/egress-policy.js'
import { egressFetch } from './webhooks/egress-fetch.js'
import { healthRouter } from '../api/routes/health.js'
import { tuneGarbageCollection } from './gc-tuning.js'
import { requireApiKey, type ApiState } from '../api/auth.js'
import { carrierHooksRouter } from '../api/routes/carrier-hooks.js'
import { outboundCallsRouter } from '../api/routes/outbound-calls.js'
import { agentLinkSessionsRouter, agentLinksRouter } from '../api/routes/agent-links.js'
import type { Carrier } from '../carrier/carrier.js'
import { mediaStreamUpgradeHandler } from '../carrier/media-stream/media-stream-upgrade.js'
import { createTwilioCarrier } from '../carrier/twilio/twilio-carrier.js'
import { createCallDeps, type CallDeps, type CallTimeouts } from './sessions/call-deps.js'
import { deviceAuthRouter } from '../api/routes/device-auth.js'
import { accountRouter } from '../api/routes/account.js'
import { sessionListRouter } from '../api/routes/session-list.js'
import { webhookDeliveriesRouter } from '../api/routes/webhook-deliveries.js'
import { metricsRouter } from '../api/routes/metrics.js'
import type { MetricsSource } from '../core/metrics.js'
import { docsRouter } from '../api/routes/docs.js'
import { openApiDocument } from '../api/openapi/openapi-document.js'
import { observeSharedVad } from '../pipeline/index.js'
import { PrometheusMetrics } from './prometheus-metrics.js'
import { withCarrierMetrics } from './carrier-metrics.js'
import { TunnelHub } from './tunnels/tunnel-hub.js'
import { webhookSwap } from './tunnels/webhook-swap.js'
import { TUNNEL_HTTP_PREFIX, TUNNEL_WS_PATH, tunnelUpgradeHandler } from './tunnels/tunnel-upgrade.js'
import { SENT_AT_HEADER } from './tunnels/tunnel-codec.js'
import { tunnelRequestsRouter } from '../api/routes/tunnel-requests.js'
import { networkInterfaces } from 'node:os'

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
  /** Moves finished recordings to the object store (RECORDING_S3_BUCKET set). */
  recordingMover: RecordingMover | undefined
  /** Deletes old recordings (RECORDING_RETENTION_DAYS set). */
  recordingRetention: RecordingRetention | undefined
  /** The tunnels this replica holds and the relay between replicas. */
  tunnels: TunnelHub
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
function carrierPath(deps: GatewayDeps, sessions: SessionManager, egress: WebhookEgress): CarrierPath {
  const carrier = withCarrierMetrics(deps.carrier?.carrier ?? createTwilioCarrier(), sessions.metrics)
  const calls = createCallDeps(
    {
      db: deps.store.db,
      log: deps.log,
      carrier,
      sessions,
      webhookPolicy: deps.config.webhookPolicy,
      webhookDelivery: { ...deps.sessionOverrides?.webhookDelivery, fetch: egress.fetch },
      egress: egress.policy,
    },
    { outboundQueueMaxWaitMs: deps.config.outboundQueueMaxWaitMs, ...deps.carrier },
  )
  return { carrier, calls }
}

/** Builds the koa application with every route. */
export function buildApp(
  deps: GatewayDeps,
  sessions: SessionManager,
  parts: {
    path: CarrierPath
    metrics: PrometheusMetrics
    recordingObjects?: RecordingObjectStore | undefined
    egress?: WebhookEgress | undefined
  },
): Koa {
  const { path, metrics, recordingObjects, egress } = parts
  const { config, store, log } = deps
  const app = new Koa({ proxy: config.trustProxy })
  app.silent = true
  app.use(errorHandler(log))

  const health = healthRouter({ store, isDraining: () => sessions.isDraining })
  app.use(health.routes())
  app.use(metricsRouter({ source: deps.metricsSource?.(metrics) ?? metrics, token: config.metricsToken }).routes())
  app.use(docsRouter({ document: openApiDocument(config.publicUrl) }).routes())
  // The demo page at / and its scripts under /client/ (client/dist).
  app.use(staticClient({ log }))

  const admin = adminRouter({ db: store.db, adminToken: config.adminToken, log })
  app.use(admin.routes()).use(admin.allowedMethods({ throw: true }))

  // Signed by the carrier, not behind the API key.
  const carrierHooks = carrierHooksRouter({ calls: path.calls, carrier: path.carrier, publicUrl: config.publicUrl })
  app.use(carrierHooks.routes()).use(carrierHooks.allowedMethods({ throw: true }))

  // Authorized by an agent link's token, not by an API key.
  const linkDeps = {
    db: store.db,
    publicUrl: config.publicUrl,
    webhookPolicy: config.webhookPolicy,
    metrics,
    egress: egress?.policy,
  }
  const linkSessions = agentLinkSessionsRouter(linkDeps)
  app.use(linkSessions.routes()).use(linkSessions.allowedMethods({ throw: true }))

  // Device sign-in: the CLI's start and poll need no key; approve and deny check their own credentials.
  const device = deviceAuthRouter({ db: store.db, publicUrl: config.publicUrl, adminToken: config.adminToken, log })
  app.use(device.routes()).use(device.allowedMethods({ throw: true }))

  // The tunnel addresses: signed by the gateway itself, not behind the API key.
  if (deps.tunnels !== undefined) {
    const tunnelRequests = tunnelRequestsRouter({ hub: deps.tunnels })
    app.use(tunnelRequests.routes()).use(tunnelRequests.allowedMethods({ throw: true }))
  }

  const v1 = new Router<ApiState>()
  v1.use('/v1', requireApiKey(store.db, config.adminToken))
  // Fixed paths (/v1/agents/web/...) are registered before /v1/agents/:agent_id so they win.
  const sessionRoutes = sessionsRouter({
    db: store.db,
    webhookPolicy: config.webhookPolicy,
    liveUsage: (id) => sessions.live.get(id)?.usageSoFar(),
    endSession: (id) => sessions.endAnywhere(id, 'hangup'),
    metrics,
    egress: egress?.policy,
  })
  const agents = agentsRouter({
    db: store.db,
    vendors: vendorAvailability(config),
    webhookPolicy: config.webhookPolicy,
    egress: egress?.policy,
  })
  v1.use(sessionRoutes.routes(), sessionRoutes.allowedMethods({ throw: true }))
  const recordings = recordingsRouter({ db: store.db, objects: recordingObjects })
  v1.use(recordings.routes(), recordings.allowedMethods({ throw: true }))
  const outbound = outboundCallsRouter({ calls: path.calls, publicUrl: config.publicUrl })
  v1.use(outbound.routes(), outbound.allowedMethods({ throw: true }))
  v1.use(agents.routes(), agents.allowedMethods({ throw: true }))
  const account = accountRouter({ db: store.db })
  v1.use(account.routes(), account.allowedMethods({ throw: true }))
  const sessionList = sessionListRouter({ db: store.db })
  v1.use(sessionList.routes(), sessionList.allowedMethods({ throw: true }))
  const deliveries = webhookDeliveriesRouter({ db: store.db, webhookPolicy: config.webhookPolicy, log, egress })
  v1.use(deliveries.routes(), deliveries.allowedMethods({ throw: true }))
  const links = agentLinksRouter(linkDeps)
  v1.use(links.routes(), links.allowedMethods({ throw: true }))
  app.use(v1.routes())
  return app
}

/** Starts the HTTP server (REST and WebSocket upgrades) and the session manager. */
export async function startGateway(deps: GatewayDeps): Promise<Gateway> {
  const { config, store, log } = deps
  tuneGarbageCollection()
  const metrics = new PrometheusMetrics(() => [...sessions.live.values()].map((s) => s.channel))
  const stopVadMetrics = observeSharedVad(metrics.vad)
  // Loaded only when configured: without an endpoint no OpenTelemetry SDK code is imported.
  const tracing =
    config.otlpEndpoint === undefined ? undefined : (await import('./otel-turn-traces.js')).startTurnTracing(config.otlpEndpoint)
  // Every webhook (agent and lifecycle) connects through the egress policy; the port is known once listening.
  let listeningPort: number | undefined
  const egressPolicy = new EgressPolicy({
    ownPort: () => listeningPort ?? config.port,
    publicUrl: config.publicUrl,
    allowCidrs: config.webhookAllowCidrs,
    denyCidrs: config.webhookDenyCidrs,
    // The tunnel relay: a webhook may call the gateway itself there (it reaches a connected CLI).
    selfPathPrefixes: [TUNNEL_HTTP_PREFIX],
  })
  // A request to the gateway's own tunnel says when it left, so a cancel at the agent step's deadline is named a
  // timeout on the developer's screen (the tunnel route does not pass the header on).
  const egressHttp = egressFetch(egressPolicy, () => ({ [SENT_AT_HEADER]: String(Date.now()) }))
  const egress: WebhookEgress = { policy: egressPolicy, fetch: egressHttp.fetch }
  // Loaded only when configured, like tracing: without RECORDING_S3_BUCKET no AWS SDK code is imported.
  const objectConfig = config.recordingObjectStore
  const recordingObjects =
    objectConfig === undefined ? undefined : (await import('./sessions/recording/s3-object-store.js')).s3ObjectStore(objectConfig)
  const mover =
    recordingObjects === undefined || objectConfig === undefined
      ? undefined
      : new RecordingMover({ db: store.db, log, objects: recordingObjects, prefix: objectConfig.prefix })
  let path: CarrierPath | undefined
  const sessions: SessionManager = new SessionManager(
    {
      metrics: tracing === undefined ? metrics : fanOutMetrics(metrics, tracing.metrics),
      db: store.db,
      log,
      webhookPolicy: config.webhookPolicy,
      usageRatePerMinute: config.usageRatePerMinute,
      vendors: config.vendors,
      recording: {
        maskDtmf: config.recordingDtmfMask,
        publicUrl: config.publicUrl,
        sink: deps.recordingSink,
        completed: mover === undefined ? undefined : (rec) => mover.moveSoon(rec),
      },
      // The carrier path is built after the manager (it counts into the manager's metrics): read it late.
      callTransfer: carrierTransferer(() => {
        if (path === undefined) throw new Error('carrier path not built yet')
        return path.calls
      }),
      ...deps.sessionOverrides,
      webhookDelivery: { ...deps.sessionOverrides?.webhookDelivery, fetch: egress.fetch },
    },
    config.leaseTtlMs,
    store.notifications,
  )
  await sessions.start()
  // Always swept: an agent's privacy.retention_days applies without a process-wide retention.
  const retention = new RecordingRetention(store.db, log, config.recordingRetentionDays, recordingObjects)
  retention?.start()
  mover?.start()
  path = carrierPath(deps, sessions, egress)
  const tunnels =
    deps.tunnels ??
    new TunnelHub({
      db: store.db,
      notifications: store.notifications,
      log,
      swap: webhookSwap(config.webhookPolicy),
      leaseMs: config.tunnelLeaseMs,
    })
  tunnels.start()
  const app = buildApp({ ...deps, tunnels }, sessions, { path, metrics, recordingObjects, egress })
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
  const tunnelUpgrade = tunnelUpgradeHandler({
    db: store.db,
    hub: tunnels,
    publicUrl: config.publicUrl,
    log,
    isDraining: () => sessions.isDraining,
  })
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined)
    const url = new URL(req.url ?? '/', 'http://gateway.invalid')
    if (url.pathname === BROWSER_WS_PATH) {
      void browser(req, socket, head, url)
      return
    }
    if (url.pathname === TUNNEL_WS_PATH) {
      tunnelUpgrade(req, socket, head, url).catch((e: unknown) => {
        log.error({ err: e }, 'tunnel upgrade failed')
        refuseUpgrade(socket, 500, 'internal error')
      })
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
  listeningPort = addr.port
  const host = addr.address === '0.0.0.0' || addr.address === '::' ? '127.0.0.1' : addr.address
  tunnels.directUrl = config.replicaUrl ?? replicaAddress(addr)
  let closing: Promise<void> | undefined
  return {
    server,
    app,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`,
    sessions,
    metrics,
    tracing: tracing !== undefined,
    recordingMover: mover,
    recordingRetention: retention,
    tunnels,
    close(graceMs = 0) {
      closing ??= (async () => {
        tunnels.drain()
        await sessions.shutdown(graceMs)
        // After the sessions: their last webhooks may still go through a tunnel. The tunnels' CLIs reconnect
        // and take them back; the lease sweep restores the agents of those that do not.
        await tunnels.stop()
        path.calls.watchdog.stop()
        retention?.stop()
        await mover?.close()
        await egressHttp.close()
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

/**
 * Where other replicas reach this process: its own address, or when it listens on all interfaces the first
 * non-loopback IPv4 address (another machine's 127.0.0.1 is that machine). REPLICA_URL overrides it.
 */
function replicaAddress(addr: AddressInfo): string {
  let host = addr.address
  if (host === '0.0.0.0' || host === '::') {
    const external = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .find((i) => i.family === 'IPv4' && !i.internal)
    host = external?.address ?? '127.0.0.1'
  }
  return `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`
}
