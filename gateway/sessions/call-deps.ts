/**
 * What the carrier-call parts of sessions (admission, progress, outbound calls, waiting calls) share: the
 * process's database, log and sessions, the deadlines of calls that wait, and a narrow view of the carrier.
 * Each function takes only the fields it uses.
 */
import type { UrlPolicy } from '../../pipeline/index.js'
import type { Kysely } from 'kysely'
import type { CallStatus, FinalCallStatus } from '../../core/call-status.js'
import type { CarrierCredentials } from '../../core/carrier-credentials.js'
import type { Log } from '../../core/log.js'
import type { TransferTarget } from '../../core/transfer-target.js'
import type { Database } from '../store/schema.js'
import type { DeliveryOptions } from '../webhooks/webhook-queue.js'
import { CallWatchdog } from './call-watchdog.js'
import type { SessionManager } from './session-manager.js'
import { endWaitingCall } from './waiting-calls.js'
import type { EgressPolicy } from '../webhooks/egress-policy.js'

/** A call to place through a carrier's Calls API. */
export interface DialRequest {
  readonly to: string
  readonly from: string
  /** Voice hook the carrier requests when the callee answers. */
  readonly url: string
  readonly statusCallback: string
  readonly statusCallbackEvents: readonly ('initiated' | 'ringing' | 'answered' | 'completed')[]
  /** Seconds to let the phone ring before giving up. */
  readonly timeoutSec: number
  /** Ask for asynchronous answering machine detection, reported to `callbackUrl`. */
  readonly machineDetection?: { readonly callbackUrl: string } | undefined
}

/**
 * What sessions need of a carrier: how call statuses move and its Calls API. The process passes its `Carrier`
 * (carrier/carrier.ts), which has all of it; sessions never import a carrier.
 */
export interface CallCarrier {
  /** The status to store when `incoming` arrives while the call is `current` (never backwards). */
  nextStatus(current: CallStatus | undefined, incoming: CallStatus): CallStatus
  /** True for statuses after which nothing else happens to the call. */
  isFinalStatus(status: CallStatus): status is FinalCallStatus
  /** A Calls API client for one organization's credentials; its calls throw the carrier's own errors. */
  callsClient(credentials: CarrierCredentials): {
    createCall(request: DialRequest): Promise<{ readonly sid: string; readonly status: string }>
    hangup(sid: string, options?: { signal?: AbortSignal }): Promise<unknown>
    /** Replaces the live call's markup (a transfer). */
    updateCall(sid: string, markup: string, options?: { signal?: AbortSignal }): Promise<unknown>
  }
  /** Its voice markup; sessions use only the transfer document. */
  readonly markup: { dial(target: TransferTarget): string }
}

/** Deadlines of carrier calls; every field has a default. */
export interface CallTimeouts {
  /** How long after answering the voice hook the media stream must connect. Default 30 s. */
  readonly streamConnectTimeoutMs?: number | undefined
  /** Seconds an outbound call may ring (`Timeout` of the Calls API). Default 60. */
  readonly ringTimeoutSec?: number | undefined
  /** Extra wait beyond the ring timeout for a final status callback before the slot is released. Default 120 s. */
  readonly statusGraceMs?: number | undefined
  /** Longest an outbound call waits for its organization's dial slot (pacing) before it is refused. Default 30 s. */
  readonly outboundQueueMaxWaitMs?: number | undefined
}

/** Everything the carrier-call functions of sessions may use. */
export interface CallDeps {
  readonly db: Kysely<Database>
  readonly log: Log
  readonly carrier: CallCarrier
  readonly sessions: SessionManager
  readonly webhookPolicy: UrlPolicy
  readonly webhookDelivery: DeliveryOptions | undefined
  /** Refuses webhook URLs of a call's config override that point where webhooks may not go. */
  readonly egress?: EgressPolicy | undefined
  readonly watchdog: CallWatchdog
  readonly streamConnectTimeoutMs: number
  readonly ringTimeoutSec: number
  readonly statusGraceMs: number
  readonly outboundQueueMaxWaitMs: number
}

/** Builds the call deps of a process; its watchdog ends (and hangs up) a waiting call whose deadline passed. */
export function createCallDeps(
  base: Pick<CallDeps, 'db' | 'log' | 'carrier' | 'sessions' | 'webhookPolicy' | 'webhookDelivery' | 'egress'>,
  timeouts: CallTimeouts = {},
): CallDeps {
  // The deps and the watchdog refer to each other: the watchdog ends calls through the deps.
  const watchdog = new CallWatchdog((sessionId, reason) => {
    void endWaitingCall(deps, sessionId, { endReason: reason, hangup: true }).catch((e: unknown) =>
      base.log.error({ err: e, session_id: sessionId }, 'could not end a carrier call that timed out'),
    )
  })
  const deps: CallDeps = {
    ...base,
    watchdog,
    streamConnectTimeoutMs: timeouts.streamConnectTimeoutMs ?? 30_000,
    ringTimeoutSec: timeouts.ringTimeoutSec ?? 60,
    statusGraceMs: timeouts.statusGraceMs ?? 120_000,
    outboundQueueMaxWaitMs: timeouts.outboundQueueMaxWaitMs ?? 30_000,
  }
  return deps
}
