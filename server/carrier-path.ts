import type { SessionManager } from '../gateway/sessions/session-manager.js'
import type { CallDeps } from '../gateway/admission/call-deps.js'
import type { SipTrunkDialer } from '../gateway/sessions/sip/sip-trunk-dialer.js'
import { createCallDeps } from '../gateway/admission/create-call-deps.js'
import type { WebhookEgress } from '../gateway/webhooks/egress-policy.js'
import type { Carrier } from '../carrier/carrier.js'
import { createTwilioCarrier } from '../carrier/twilio/twilio-carrier.js'
import { withCarrierMetrics } from './carrier-metrics.js'
import type { GatewayDeps } from './gateway-deps.js'
import { MACHINE_DETECTION_PATH, STATUS_CALLBACK_PATH } from '../api/routes/carrier-hooks.js'
import type { WarmTransferDeps } from '../gateway/transfer/session-warm-transfer.js'
import { TransferLegs } from '../gateway/transfer/transfer-legs.js'
import type { HoldMusicCache } from '../gateway/transfer/hold-music.js'

/** The process's carrier, and what its calls share with sessions. */
export interface CarrierPath {
  carrier: Carrier
  calls: CallDeps
}

/** The one place a carrier is chosen: everything below gets it passed in. */
export function carrierPath(
  deps: GatewayDeps,
  sessions: SessionManager,
  egress: WebhookEgress,
  /** The SIP endpoint once it listens (outbound calls through an organization's trunk). */
  sipDialer?: () => SipTrunkDialer | undefined,
): CarrierPath {
  const carrier = withCarrierMetrics(deps.carrier?.carrier ?? createTwilioCarrier(), sessions.metrics)
  const calls = createCallDeps(
    {
      db: deps.store.db,
      log: deps.log,
      carrier,
      sessions,
      webhookPolicy: deps.config.webhookPolicy,
      webhookDelivery: { ...deps.sessionOverrides?.webhookDelivery, fetch: egress.fetch, privateTarget: egress.privateTarget },
      egress: egress.policy,
      sipDialer,
      sipCredentialsKey: deps.config.sipCredentialsKey,
    },
    { outboundQueueMaxWaitMs: deps.config.outboundQueueMaxWaitMs, ...deps.carrier },
  )
  return { carrier, calls }
}

/**
 * What a warm transfer's human leg needs of the process: its Calls API, the legs it waits for, the callback URLs, and
 * the SIP endpoint and trunk key (a SIP caller's human is dialled through the organization's trunk).
 */
export function warmTransferDeps(path: CarrierPath, publicUrl: string, holdMusic?: HoldMusicCache): WarmTransferDeps {
  const base = publicUrl.replace(/\/+$/, '')
  return {
    holdMusic,
    db: path.calls.db,
    sip: { db: path.calls.db, sipDialer: path.calls.sipDialer, sipCredentialsKey: path.calls.sipCredentialsKey },
    carrier: path.carrier,
    legs: path.calls.transferLegs ?? new TransferLegs(),
    publicUrl,
    statusCallbackUrl: `${base}${STATUS_CALLBACK_PATH}`,
    machineDetectionUrl: `${base}${MACHINE_DETECTION_PATH}`,
  }
}
