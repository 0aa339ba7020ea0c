/**
 * The gateway side of the carrier path, wired once per process: the unauthenticated (signed) carrier
 * webhooks, the API-key route that places outbound calls, and the media stream upgrade handler.
 */
import Router from '@koa/router'
import type { Kysely } from 'kysely'
import { createTwilioCarrier } from '../twilio/twilio-carrier.js'
import type { Database } from '../../gateway/store/schema.js'
import type { Log } from '../../core/log.js'
import type { SessionManager } from '../../gateway/sessions/session-manager.js'
import type { DeliveryOptions } from '../../gateway/webhooks/webhook-queue.js'
import type { ApiState } from '../../api/auth.js'
import { CallWatchdog } from './call-watchdog.js'
import type { CarrierContext, CarrierGatewayOptions } from './carrier-context.js'
import { mediaStreamUpgradeHandler } from '../media-stream/media-stream-upgrade.js'
import { outboundRouter } from './outbound-call.js'
import { statusCallback, STATUS_CALLBACK_PATH } from './status-callback.js'
import { voiceHook, VOICE_HOOK_PATH } from './voice-hook.js'
import { endWaitingCall } from './waiting-call-end.js'

export type { CarrierGatewayOptions } from './carrier-context.js'

/** What `createCarrierGateway` needs from the process. */
export interface CarrierGatewayDeps {
  db: Kysely<Database>
  log: Log
  sessions: SessionManager
  publicUrl: string
  allowInsecureWebhooks: boolean
  trustProxy: boolean
  webhookDelivery?: DeliveryOptions | undefined
  options?: CarrierGatewayOptions | undefined
}

/** The carrier path of one gateway process. */
export interface CarrierGateway {
  readonly context: CarrierContext
  /** Voice hook and status callback: not behind the API key (the carrier signs them instead). */
  hooksRouter(): Router
  /** initiate_outbound, for the API-key-protected /v1 router. */
  outboundRouter(): Router<ApiState>
  /** True when an upgrade request is for a media stream. */
  isMediaStreamPath(pathname: string): boolean
  /** Handles a media stream upgrade. */
  upgrade: ReturnType<typeof mediaStreamUpgradeHandler>
  /** Clears the waiting-call deadlines (shutdown). */
  stop(): void
}

/** Builds the carrier path. */
export function createCarrierGateway(deps: CarrierGatewayDeps): CarrierGateway {
  const options = deps.options ?? {}
  // The context and the watchdog refer to each other: the watchdog ends calls through the context.
  const watchdog = new CallWatchdog((sessionId, reason) => {
    void endWaitingCall(context, sessionId, { endReason: reason, hangup: true }).catch((e: unknown) =>
      deps.log.error({ err: e, session_id: sessionId }, 'could not end a carrier call that timed out'),
    )
  })
  const context: CarrierContext = {
    db: deps.db,
    log: deps.log,
    carrier: options.carrier ?? createTwilioCarrier(),
    sessions: deps.sessions,
    publicUrl: deps.publicUrl,
    allowInsecureWebhooks: deps.allowInsecureWebhooks,
    webhookDelivery: deps.webhookDelivery,
    streamConnectTimeoutMs: options.streamConnectTimeoutMs ?? 30_000,
    ringTimeoutSec: options.ringTimeoutSec ?? 60,
    statusGraceMs: options.statusGraceMs ?? 120_000,
    watchdog,
    frameTiming: options.frameTiming,
  }
  return {
    context,
    hooksRouter() {
      const r = new Router()
      r.post(VOICE_HOOK_PATH, voiceHook(context))
      r.post(STATUS_CALLBACK_PATH, statusCallback(context))
      return r
    },
    outboundRouter: () => outboundRouter(context),
    isMediaStreamPath: (pathname) => pathname.startsWith(context.carrier.mediaStream.pathPrefix),
    upgrade: mediaStreamUpgradeHandler(context, { trustProxy: deps.trustProxy }),
    stop: () => watchdog.stop(),
  }
}
