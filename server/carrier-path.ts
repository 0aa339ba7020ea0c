import type { Metrics } from '../core/metrics.js'
import type { SessionManager } from '../gateway/sessions/session-manager.js'
import type { SessionDeps } from '../gateway/sessions/session-deps.js'
import type { CallDeps } from '../gateway/admission/call-deps.js'
import type { SipTrunkDialer } from '../gateway/sessions/sip/sip-trunk-dialer.js'
import { carrierTransferer } from '../gateway/sessions/carrier/call-transfer.js'
import { createCallDeps } from '../gateway/admission/create-call-deps.js'
import type { WebhookEgress } from '../gateway/webhooks/egress-policy.js'
import type { Carrier } from '../carrier/carrier.js'
import { createTwilioCarrier } from '../carrier/twilio/twilio-carrier.js'
import { withCarrierMetrics } from './carrier-metrics.js'
import type { GatewayDeps } from './gateway-deps.js'
import { MACHINE_DETECTION_PATH, STATUS_CALLBACK_PATH } from '../api/routes/carrier-hooks.js'
import { sessionWarmTransfer, type WarmTransferDeps } from '../gateway/transfer/session-warm-transfer.js'
import { TransferLegs } from '../gateway/transfer/transfer-legs.js'
import type { HoldMusicCache } from '../gateway/transfer/hold-music.js'

/**
 * What phone calls share, made before the sessions: the carrier (the one place it is chosen: everything below
 * gets it passed in), the human legs warm transfers wait for, and the SIP endpoint once it listens.
 */
export interface PhoneLines {
  readonly carrier: Carrier
  readonly legs: TransferLegs
  /**
   * The SIP endpoint (outbound calls and transfers through an organization's trunk). It starts last, as its
   * admission opens sessions, so it is read when a call is placed.
   */
  readonly sipDialer: () => SipTrunkDialer | undefined
}

/** The process's carrier, counted into `metrics`, and the legs its transfers wait for. */
export function phoneLines(deps: GatewayDeps, metrics: Metrics, sipDialer: () => SipTrunkDialer | undefined): PhoneLines {
  return { carrier: withCarrierMetrics(deps.carrier?.carrier ?? createTwilioCarrier(), metrics), legs: new TransferLegs(), sipDialer }
}

/** The process's carrier, and what its calls share with sessions. */
export interface CarrierPath {
  carrier: Carrier
  calls: CallDeps
}

/** The carrier calls' deps: admission, progress, outbound calls and waiting calls over the running sessions. */
export function carrierPath(deps: GatewayDeps, lines: PhoneLines, sessions: SessionManager, egress: WebhookEgress): CarrierPath {
  const calls = createCallDeps(
    {
      db: deps.store.db,
      log: deps.log,
      carrier: lines.carrier,
      sessions,
      webhookPolicy: deps.config.webhookPolicy,
      webhookDelivery: { ...deps.sessionOverrides?.webhookDelivery, fetch: egress.fetch, privateTarget: egress.privateTarget },
      egress: egress.policy,
      sipDialer: lines.sipDialer,
      sipCredentialsKey: deps.config.sipCredentialsKey,
      transferLegs: lines.legs,
    },
    { outboundQueueMaxWaitMs: deps.config.outboundQueueMaxWaitMs, ...deps.carrier },
  )
  return { carrier: lines.carrier, calls }
}

/** How a session's calls are transferred: cold by the carrier's markup, warm through the carrier or a SIP trunk. */
export function sessionTransfers(
  deps: GatewayDeps,
  lines: PhoneLines,
  holdMusic: HoldMusicCache,
  metrics: Metrics,
): Pick<SessionDeps, 'callTransfer' | 'warmTransfer'> {
  const cold = { db: deps.store.db, carrier: lines.carrier, log: deps.log }
  const warm = warmTransferDeps(deps, lines, holdMusic)
  return {
    callTransfer: carrierTransferer(() => cold),
    warmTransfer: (session) => sessionWarmTransfer(session, () => warm, metrics),
  }
}

/**
 * What a warm transfer's human leg needs of the process: its Calls API, the legs it waits for, the callback URLs, and
 * the SIP endpoint and trunk key (a SIP caller's human is dialled through the organization's trunk).
 */
function warmTransferDeps(deps: GatewayDeps, lines: PhoneLines, holdMusic: HoldMusicCache): WarmTransferDeps {
  const publicUrl = deps.config.publicUrl
  const base = publicUrl.replace(/\/+$/, '')
  const db = deps.store.db
  return {
    holdMusic,
    db,
    sip: { db, sipDialer: lines.sipDialer, sipCredentialsKey: deps.config.sipCredentialsKey },
    carrier: lines.carrier,
    legs: lines.legs,
    publicUrl,
    statusCallbackUrl: `${base}${STATUS_CALLBACK_PATH}`,
    machineDetectionUrl: `${base}${MACHINE_DETECTION_PATH}`,
  }
}
