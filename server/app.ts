import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type Koa from 'koa'
import { fanOutMetrics } from '../core/metrics.js'
import { SessionManager } from '../gateway/sessions/session-manager.js'
import { carrierTransferer } from '../gateway/sessions/carrier/call-transfer.js'
import { warmTransferDeps } from './carrier-path.js'
import { sessionWarmTransfer } from '../gateway/transfer/session-warm-transfer.js'
import { RecordingRetention } from '../gateway/recording/retention.js'
import { RecordingMover } from '../gateway/recording/recording-mover.js'
import { EgressPolicy, type WebhookEgress } from '../gateway/webhooks/egress-policy.js'
import { egressFetch } from '../gateway/webhooks/egress-fetch.js'
import { TunnelHub } from '../gateway/tunnels/tunnel-hub.js'
import { webhookSwap } from '../gateway/tunnels/webhook-swap.js'
import { TUNNEL_HTTP_PREFIX } from '../gateway/tunnels/tunnel-upgrade.js'
import { SENT_AT_HEADER } from '../gateway/tunnels/tunnel-codec.js'
import { mountUpgrades } from '../transports/http/upgrade-routes.js'
import { observeSharedVad } from '../pipeline/index.js'
import { tuneGarbageCollection } from './gc-tuning.js'
import { PrometheusMetrics } from './prometheus-metrics.js'
import { carrierPath, type CarrierPath } from './carrier-path.js'
import { buildApp, campaignDelivery } from './routes.js'
import { CampaignDialer } from '../gateway/campaigns/campaign-dialer.js'
import { MACHINE_DETECTION_PATH, STATUS_CALLBACK_PATH, VOICE_HOOK_PATH } from '../api/routes/carrier-hooks.js'
import { upgradeRoutes } from './upgrades.js'
import { replicaAddress } from './replica-address.js'
import { LegRelays } from '../transports/media-stream/transfer-leg-relay.js'
import { HoldMusicCache } from '../gateway/transfer/hold-music.js'
import { startSip } from './sip-wiring.js'
import { storeSipAdmission } from '../transports/sip/admission/sip-trunk-invites.js'
import { sipAuthMetrics } from './sip-auth-metrics.js'
import type { SipEndpoint } from '../transports/sip/endpoint/sip-endpoint.js'
import type { GatewayDeps } from './gateway-deps.js'

/** How long closing waits for upgraded sockets to finish their close handshakes. */
const SERVER_CLOSE_WAIT_MS = 2_000

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
  /** The SIP endpoint (SIP_PORT set); it drains with the sessions and closes with the gateway. */
  sip: SipEndpoint | undefined
  /** This replica's campaign dialer; it stops claiming as the gateway closes. */
  campaigns: CampaignDialer
  /**
   * Stops taking new sessions at once, lets live ones go on for up to `graceMs` (default 0: ends them now),
   * ends the rest with `shutdown`, then closes the server. The server keeps answering meanwhile: `/readyz`
   * says 503 and the carrier's callbacks for live calls still land. Idempotent (the first `graceMs` holds).
   */
  close(graceMs?: number): Promise<void>
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
  for (const warning of config.warnings) log.warn({}, warning)
  const egressPolicy = new EgressPolicy({
    ownPort: () => listeningPort ?? config.port,
    publicUrl: config.publicUrl,
    allowCidrs: config.egressAllowCidrs,
    denyCidrs: config.egressDenyCidrs,
    // A developer's backend runs on their machine; documented as never for production.
    allowLoopback: config.allowInsecureWebhooks,
    // The tunnel relay: a webhook may call the gateway itself there (it reaches a connected CLI).
    selfPathPrefixes: [TUNNEL_HTTP_PREFIX],
  })
  // A request to the gateway's own tunnel says when it left, so a cancel at the agent step's deadline is named a
  // timeout on the developer's screen (the tunnel route does not pass the header on).
  const egressHttp = egressFetch(egressPolicy, {
    ownHeaders: () => ({ [SENT_AT_HEADER]: String(Date.now()) }),
    // The organization's report says only "refused by the egress policy"; the operator's log says which rule.
    onRefused: (why) => log.warn({ why }, 'webhook refused by the egress policy'),
  })
  const egress: WebhookEgress = { policy: egressPolicy, fetch: egressHttp.fetch, privateTarget: egressHttp.privateTarget }
  // Agents' hold music files, fetched under the webhooks' egress rules, once per process.
  const holdMusic = new HoldMusicCache(egress.fetch)
  // Loaded only when configured, like tracing: without RECORDING_S3_BUCKET no AWS SDK code is imported.
  const objectConfig = config.recordingObjectStore
  const recordingObjects =
    objectConfig === undefined ? undefined : (await import('../gateway/recording/s3-object-store.js')).s3ObjectStore(objectConfig)
  const mover =
    recordingObjects === undefined || objectConfig === undefined
      ? undefined
      : new RecordingMover({ db: store.db, log, objects: recordingObjects, prefix: objectConfig.prefix })
  let path: CarrierPath | undefined
  const reported = tracing === undefined ? metrics : fanOutMetrics(metrics, tracing.metrics)
  const sessions: SessionManager = new SessionManager(
    {
      metrics: reported,
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
      warmTransfer: (session) =>
        sessionWarmTransfer(
          session,
          () => {
            if (path === undefined) throw new Error('carrier path not built yet')
            return warmTransferDeps(path, config.publicUrl, holdMusic)
          },
          reported,
        ),
      ...deps.sessionOverrides,
      webhookDelivery: { ...deps.sessionOverrides?.webhookDelivery, fetch: egress.fetch, privateTarget: egress.privateTarget },
    },
    config.leaseTtlMs,
    store.notifications,
  )
  await sessions.start()
  // Always swept: an agent's privacy.retention_days applies without a process-wide retention.
  const retention = new RecordingRetention(store.db, log, config.recordingRetentionDays, recordingObjects)
  retention?.start()
  mover?.start()
  path = carrierPath(deps, sessions, egress, () => sip)
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
  const base = config.publicUrl.replace(/\/+$/, '')
  const campaigns = new CampaignDialer({
    db: store.db,
    log,
    calls: path.calls,
    hookUrls: {
      voice: `${base}${VOICE_HOOK_PATH}`,
      status: `${base}${STATUS_CALLBACK_PATH}`,
      machineDetection: `${base}${MACHINE_DETECTION_PATH}`,
    },
    webhooks: { db: store.db, log, webhookPolicy: config.webhookPolicy, webhookDelivery: campaignDelivery(deps, egress) },
    now: deps.campaigns?.now,
    tickMs: deps.campaigns?.tickMs,
  })
  const server = createServer(app.callback())
  server.requestTimeout = 60_000
  server.headersTimeout = 15_000

  // Warm transfer legs the balancer sends here while another replica waits for them are relayed there.
  const legRelays = new LegRelays()
  mountUpgrades(server, upgradeRoutes(deps, { sessions, path, tunnels, legRelays }), log)

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
  path.calls.transferLegs?.publishAt({ db: store.db, replicaUrl: tunnels.directUrl, log })
  let closing: Promise<void> | undefined
  let sip: SipEndpoint | undefined
  const gateway: Gateway = {
    server,
    app,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`,
    sessions,
    metrics,
    tracing: tracing !== undefined,
    recordingMover: mover,
    recordingRetention: retention,
    tunnels,
    campaigns,
    get sip() {
      return sip
    },
    close(graceMs = 0) {
      closing ??= (async () => {
        // At once (before any await): no new session or call is admitted (the SIP endpoint answers 503 from here).
        // Relayed transfer legs are kept as long as sessions are: the bridge they carry runs on another replica.
        const drained = Promise.all([sessions.shutdown(graceMs), legRelays.drain(graceMs)])
        tunnels.drain()
        // Nothing new is claimed; a campaign's calls already placed end with the sessions, and any replica settles them.
        await campaigns.close()
        await drained
        // After the sessions: OPTIONS health checks are answered (and INVITEs get 503) until the calls are gone.
        await sip?.close()
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
  try {
    sip = await startSip({
      settings: config.sip,
      log,
      metrics: metrics.sip,
      isDraining: () => sessions.isDraining,
      addressRefusal: (ip, port) => egressPolicy.addressRefusal(ip, port),
      admission: storeSipAdmission({
        db: store.db,
        log,
        sessions,
        credentialsKey: config.sipCredentialsKey,
        webhookPolicy: config.webhookPolicy,
        realm: config.sip?.publicHost ?? 'voxgate',
        authMetrics: sipAuthMetrics(metrics.registry),
      }),
    })
  } catch (e) {
    // The SIP port is taken or not ours: the gateway does not half-start.
    await gateway.close()
    throw e
  }
  campaigns.start()
  return gateway
}
