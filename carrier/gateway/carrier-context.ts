import type { Kysely } from 'kysely'
import type { Carrier } from '../carrier.js'
import type { Database } from '../../gateway/store/schema.js'
import type { Log } from '../../core/log.js'
import type { SessionManager } from '../../gateway/sessions/session-manager.js'
import type { DeliveryOptions } from '../../gateway/webhooks/webhook-queue.js'
import type { CallWatchdog } from './call-watchdog.js'

/** Tuning of the carrier path; every field has a default. */
export interface CarrierGatewayOptions {
  /** The carrier implementation (default: Twilio-compatible). */
  carrier?: Carrier
  /** How long after answering the voice hook the media stream must connect. Default 30 s. */
  streamConnectTimeoutMs?: number
  /** Seconds an outbound call may ring (`Timeout` of the Calls API). Default 60. */
  ringTimeoutSec?: number
  /** Extra wait beyond the ring timeout for a final status callback before the slot is released. Default 120 s. */
  statusGraceMs?: number
  /** Measures the synchronous handling of each media-stream frame in ms (benchmarks). */
  frameTiming?: (ms: number) => void
}

/** What every part of the carrier path shares. */
export interface CarrierContext {
  readonly db: Kysely<Database>
  readonly log: Log
  readonly carrier: Carrier
  readonly sessions: SessionManager
  readonly publicUrl: string
  readonly allowInsecureWebhooks: boolean
  readonly webhookDelivery: DeliveryOptions | undefined
  readonly streamConnectTimeoutMs: number
  readonly ringTimeoutSec: number
  readonly statusGraceMs: number
  readonly watchdog: CallWatchdog
  readonly frameTiming: ((ms: number) => void) | undefined
}
