import type { Kysely } from 'kysely'
import type { Metrics } from '../../core/metrics.js'
import type { Log } from '../../core/log.js'
import type { UrlPolicy, VadFactory } from '../../pipeline/index.js'
import type { RecordingSettings } from '../recording/session-recording.js'
import type { Database } from '../store/schema.js'
import type { DeliveryOptions } from '../webhooks/webhook-queue.js'
import type { ChannelTransferers } from './carrier/call-transfer.js'
import type { VendorEndpoints } from './ports/pipeline-factory.js'
import type { WarmTransferFactory } from './ports/warm-transfer-port.js'

/** What every session of this process shares. */
export interface SessionDeps extends ChannelTransferers {
  db: Kysely<Database>
  log: Log
  webhookPolicy: UrlPolicy
  usageRatePerMinute: number
  webhookDelivery?: DeliveryOptions
  /** Length of a "minute" for the SPEC's minute-based timeouts; tests shorten it. */
  minuteMs?: number
  /** Speech vendors and LLM; without them sessions run with what needs no key. */
  vendors?: VendorEndpoints
  /** VAD override (tests); the default is Silero v5, batched per process. */
  createVad?: VadFactory
  /** Where sessions, turns and webhook deliveries are counted; default: nowhere. */
  metrics?: Metrics
  /** How sessions of organizations with `recording_enabled` are recorded; without it nothing is. */
  recording?: RecordingSettings | undefined
  /** Dials warm transfers' human legs (`mode: "warm"`, phone calls); without it a warm transfer is refused. */
  warmTransfer?: WarmTransferFactory | undefined
}

/** Usage figures a pipeline reports during the call. */
export interface SessionUsage {
  transcriptionSeconds: number
  ttsSeconds: number
  latencySamples: number[]
}
