/**
 * What the carrier-call parts of sessions (admission, progress, outbound calls, waiting calls) share: the
 * process's database, log and sessions, the deadlines of calls that wait, and a narrow view of the carrier.
 * Each function takes only the fields it uses. Types only: create-call-deps.ts builds them.
 */
import type { UrlPolicy } from '../../pipeline/index.js'
import type { Kysely } from 'kysely'
import type { Log } from '../../core/log.js'
import type { Database } from '../store/schema.js'
import type { DeliveryOptions } from '../webhooks/webhook-queue.js'
import type { CallWatchdog } from './call-watchdog.js'
import type { SessionManager } from '../sessions/session-manager.js'
import type { CallCarrier } from '../sessions/carrier/call-carrier.js'
import type { TransferLegs } from '../transfer/transfer-legs.js'
import type { EgressPolicy } from '../webhooks/egress-policy.js'
import type { SipOutboundDeps } from '../sessions/sip/sip-trunk-dialer.js'

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

/** Everything the carrier-call functions of sessions may use (and the SIP trunk, for outbound calls through it). */
export interface CallDeps extends SipOutboundDeps {
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
  /** The warm transfers' human legs this process waits for (their streams and callbacks come here). */
  readonly transferLegs?: TransferLegs | undefined
}
