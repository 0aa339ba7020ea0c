import type { CallStatus, FinalCallStatus } from '../../../core/call-status.js'
import type { CarrierCredentials } from '../../../core/carrier-credentials.js'
import type { TransferTarget } from '../../../core/transfer-target.js'

/** A call to place through a carrier's Calls API. */
export interface DialRequest {
  readonly to: string
  readonly from: string
  /** Voice hook the carrier requests when the callee answers; exactly one of `url` and `twiml`. */
  readonly url?: string | undefined
  /** Markup the answered call follows instead (a warm transfer's leg: a media stream back to the gateway). */
  readonly twiml?: string | undefined
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
  /** Its voice markup: the transfer document, and a media stream for a warm transfer's leg. */
  readonly markup: {
    dial(target: TransferTarget): string
    connectStream(streamUrl: string, parameters?: Readonly<Record<string, string>>): string
  }
  /** Where its media streams connect: the public stream URL of a one-time key. */
  readonly mediaStream: { streamUrl(publicUrl: string, key: string): string }
}
