/**
 * The SIP endpoint as the gateway runs it: started after the HTTP server listens when SIP_PORT is set, draining
 * with the sessions (new INVITEs get 503 while OPTIONS health checks still get 200), closed with the gateway.
 * INVITEs are admitted through the store (transports/sip/admission/sip-trunk-invites.ts): trunks, digest, the dialled number's agent.
 */
import type { Log } from '../core/log.js'
import { refuseEveryInvite, type SipAdmission } from '../transports/sip/calls/sip-admission.js'
import { SipEndpoint, type SipEndpointMetrics } from '../transports/sip/endpoint/sip-endpoint.js'
import type { SipSettings } from './config.js'
import type { SessionManager } from '../gateway/sessions/session-manager.js'
import type { EgressPolicy } from '../gateway/webhooks/egress-policy.js'
import { storeSipAdmission } from '../transports/sip/admission/sip-trunk-invites.js'
import type { GatewayDeps } from './gateway-deps.js'
import type { PrometheusMetrics } from './prometheus-metrics.js'
import { sipAuthMetrics } from './sip-auth-metrics.js'

/** What the SIP wiring needs of the gateway. */
export interface SipWiringDeps {
  readonly settings: SipSettings | undefined
  readonly log: Log
  readonly metrics: SipEndpointMetrics
  /** The gateway's drain state (the session manager's). */
  readonly isDraining: () => boolean
  readonly admission?: SipAdmission
  /** The webhooks' egress rules, applied to outbound trunks' addresses too. */
  readonly addressRefusal?: (ip: string, port: number) => string | undefined
}

/** Starts the endpoint when SIP is configured and logs its address once; undefined when SIP is off. */
export async function startSip(deps: SipWiringDeps): Promise<SipEndpoint | undefined> {
  const { settings, log } = deps
  if (settings === undefined) return undefined
  const endpoint = await SipEndpoint.start({
    host: settings.host,
    port: settings.port,
    publicHost: settings.publicHost,
    log,
    metrics: deps.metrics,
    isDraining: deps.isDraining,
    admission: deps.admission ?? refuseEveryInvite,
    rtpPorts: { min: settings.rtpPortMin, max: settings.rtpPortMax },
    addressRefusal: deps.addressRefusal,
    tls: settings.tls,
    tlsCa: settings.tlsCa,
    mediaTimeoutMs: settings.mediaTimeoutS * 1000,
    comfortNoise: settings.comfortNoise,
  })
  log.info(
    {
      sip_host: settings.host,
      sip_port: endpoint.port,
      sip_tls_port: endpoint.tlsPort,
      sip_public_host: settings.publicHost,
      transports: endpoint.tlsPort === undefined ? ['udp', 'tcp'] : ['udp', 'tcp', 'tls'],
    },
    'SIP endpoint listening',
  )
  return endpoint
}

/** The gateway's SIP endpoint (SIP_PORT set): INVITEs admitted through the store, outbound trunks under the egress rules. */
export function startGatewaySip(
  deps: GatewayDeps,
  parts: { sessions: SessionManager; metrics: PrometheusMetrics; egressPolicy: EgressPolicy },
): Promise<SipEndpoint | undefined> {
  const { config, store, log } = deps
  const { sessions, metrics, egressPolicy } = parts
  return startSip({
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
}
