import type { Server } from 'node:http'
import type { Metrics } from '../core/metrics.js'
import type Koa from 'koa'
import { SessionManager } from '../gateway/sessions/session-manager.js'
import type { RecordingMover } from '../gateway/recording/recording-mover.js'
import type { RecordingRetention } from '../gateway/recording/retention.js'
import { HoldMusicCache } from '../gateway/transfer/hold-music.js'
import { TunnelHub } from '../gateway/tunnels/tunnel-hub.js'
import { webhookSwap } from '../gateway/tunnels/webhook-swap.js'
import { CampaignDialer } from '../gateway/campaigns/campaign-dialer.js'
import { mountUpgrades } from '../transports/http/upgrade-routes.js'
import { LegRelays } from '../transports/media-stream/transfer-leg-relay.js'
import type { SipEndpoint } from '../transports/sip/endpoint/sip-endpoint.js'
import { MACHINE_DETECTION_PATH, STATUS_CALLBACK_PATH, VOICE_HOOK_PATH } from '../api/routes/carrier-hooks.js'
import { carrierPath, type CarrierPath, phoneLines, sessionTransfers } from './carrier-path.js'
import type { GatewayDeps } from './gateway-deps.js'
import { tuneGarbageCollection } from './gc-tuning.js'
import { closeHttp, httpServer, listen } from './http-listener.js'
import { type Observability, startObservability } from './observability.js'
import type { PrometheusMetrics } from './prometheus-metrics.js'
import { recordingStorage, type RecordingStorage } from './recording-storage.js'
import { replicaAddress } from './replica-address.js'
import { buildApp, campaignDelivery } from './routes.js'
import { startGatewaySip } from './sip-wiring.js'
import { upgradeRoutes } from './upgrades.js'
import { type GatewayEgress, webhookEgress } from './webhook-egress.js'

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

/**
 * Starts the gateway, floor by floor: metrics and webhook egress, recording storage, the phone lines (carrier,
 * transfer legs), the sessions, the carrier calls, tunnels, the HTTP server and its upgrades, then SIP, which
 * admits into the running sessions, and last the campaign dialer.
 */
export async function startGateway(deps: GatewayDeps): Promise<Gateway> {
  const { config, store, log } = deps
  tuneGarbageCollection()
  for (const warning of config.warnings) log.warn({}, warning)
  let sessions: SessionManager | undefined
  const observed = await startObservability(config, () => [...(sessions?.live.values() ?? [])].map((s) => s.channel))
  const egress = webhookEgress(config, log)
  const recordings = await recordingStorage(deps)
  // The SIP endpoint starts last (its admission opens sessions); outbound calls and transfers read it when dialling.
  let sip: SipEndpoint | undefined
  const lines = phoneLines(deps, observed.reported, () => sip)
  sessions = await startSessions(deps, {
    metrics: observed.reported,
    egress,
    recordings,
    // Agents' hold music files, fetched under the webhooks' egress rules, once per process.
    transfers: sessionTransfers(deps, lines, new HoldMusicCache(egress.fetch), observed.reported),
  })
  recordings.retention.start()
  recordings.mover?.start()
  const path = carrierPath(deps, lines, sessions, egress)
  const tunnels = startTunnels(deps)
  const app = buildApp({ ...deps, tunnels }, sessions, { path, metrics: observed.metrics, recordingObjects: recordings.objects, egress })
  const campaigns = campaignDialer(deps, path, egress)
  const server = httpServer(app)
  // Warm transfer legs the balancer sends here while another replica waits for them are relayed there.
  const legRelays = new LegRelays()
  mountUpgrades(server, upgradeRoutes(deps, { sessions, path, tunnels, legRelays }), log)
  const { address, url } = await listen(server, config.port, config.host)
  egress.listeningOn(address.port)
  tunnels.directUrl = config.replicaUrl ?? replicaAddress(address)
  path.calls.transferLegs?.publishAt({ db: store.db, replicaUrl: tunnels.directUrl, log })

  const live = sessions
  let closing: Promise<void> | undefined
  const gateway: Gateway = {
    server,
    app,
    url,
    sessions: live,
    metrics: observed.metrics,
    tracing: observed.tracing,
    recordingMover: recordings.mover,
    recordingRetention: recordings.retention,
    tunnels,
    campaigns,
    get sip() {
      return sip
    },
    close(graceMs = 0) {
      closing ??= closeGateway(graceMs, {
        sessions: live,
        legRelays,
        tunnels,
        campaigns,
        sip: () => sip,
        path,
        recordings,
        egress,
        observed,
        server,
      })
      return closing
    },
  }
  try {
    sip = await startGatewaySip(deps, { sessions: live, metrics: observed.metrics, egressPolicy: egress.policy })
  } catch (e) {
    // The SIP port is taken or not ours: the gateway does not half-start.
    await gateway.close()
    throw e
  }
  campaigns.start()
  return gateway
}

/** The session manager, started: its sessions report to `metrics`, send webhooks through `egress` and record. */
async function startSessions(
  deps: GatewayDeps,
  parts: { metrics: Metrics; egress: GatewayEgress; recordings: RecordingStorage; transfers: ReturnType<typeof sessionTransfers> },
): Promise<SessionManager> {
  const { config, store, log } = deps
  const { mover } = parts.recordings
  const sessions = new SessionManager(
    {
      metrics: parts.metrics,
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
      ...parts.transfers,
      ...deps.sessionOverrides,
      webhookDelivery: { ...deps.sessionOverrides?.webhookDelivery, fetch: parts.egress.fetch, privateTarget: parts.egress.privateTarget },
    },
    config.leaseTtlMs,
    store.notifications,
  )
  await sessions.start()
  return sessions
}

/** The tunnels this replica holds (`deps.tunnels` when a test brings its own), started. */
function startTunnels(deps: GatewayDeps): TunnelHub {
  const { config, store, log } = deps
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
  return tunnels
}

/** This replica's campaign dialer: it places calls through the carrier path with the voice hook's URLs. */
function campaignDialer(deps: GatewayDeps, path: CarrierPath, egress: GatewayEgress): CampaignDialer {
  const { config, store, log } = deps
  const base = config.publicUrl.replace(/\/+$/, '')
  return new CampaignDialer({
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
}

/** What closing stops, in its order. */
interface ClosingParts {
  readonly sessions: SessionManager
  readonly legRelays: LegRelays
  readonly tunnels: TunnelHub
  readonly campaigns: CampaignDialer
  readonly sip: () => SipEndpoint | undefined
  readonly path: CarrierPath
  readonly recordings: RecordingStorage
  readonly egress: GatewayEgress
  readonly observed: Observability
  readonly server: Server
}

/** Drains and stops the gateway (Gateway.close): sessions first, then what their last moments still use. */
async function closeGateway(graceMs: number, p: ClosingParts): Promise<void> {
  // At once (before any await): no new session or call is admitted (the SIP endpoint answers 503 from here).
  // Relayed transfer legs are kept as long as sessions are: the bridge they carry runs on another replica.
  const drained = Promise.all([p.sessions.shutdown(graceMs), p.legRelays.drain(graceMs)])
  p.tunnels.drain()
  // Nothing new is claimed; a campaign's calls already placed end with the sessions, and any replica settles them.
  await p.campaigns.close()
  await drained
  // After the sessions: OPTIONS health checks are answered (and INVITEs get 503) until the calls are gone.
  await p.sip()?.close()
  // After the sessions: their last webhooks may still go through a tunnel. The tunnels' CLIs reconnect
  // and take them back; the lease sweep restores the agents of those that do not.
  await p.tunnels.stop()
  p.path.calls.watchdog.stop()
  p.recordings.retention.stop()
  await p.recordings.mover?.close()
  await p.egress.close()
  p.observed.stop()
  await closeHttp(p.server)
  await p.observed.shutdown()
}
