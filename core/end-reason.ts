import type { FinalCallStatus } from './call-status.js'

/**
 * Why a session ended: stored as `end_reason` and sent in `session.end`. One list for every channel and every
 * way a row ends, so a reason is never a free string.
 */
export type EndReason =
  // A connected session (browser or phone) ends with one of these.
  | 'client_disconnected'
  | 'hangup'
  | 'caller_hangup'
  | 'duration_timeout'
  | 'silence_timeout'
  | 'shutdown'
  | 'error'
  // A SIP call's peer sent no RTP or RTCP for SIP_MEDIA_TIMEOUT_S while not holding the call.
  | 'media_timeout'
  // The carrier connected the caller elsewhere (`response.transfer`, an addition to the SPEC).
  | 'transferred'
  // A warm transfer's bridged call ended: the caller, or the human it was handed to, hung up.
  | 'transfer_caller_hangup'
  | 'transfer_human_hangup'
  // Its process died and the sweeper ended it (connected or not).
  | 'lease_expired'
  // A newer authorization of the conversation replaced a key that was never used.
  | 'superseded'
  // A carrier call that never reached its media stream.
  | 'stream_not_connected'
  | 'call_status_timeout'
  | 'carrier_error'
  // initiate_outbound found its organization's dial queue full (pacing): the call was never dialled.
  | 'dial_queue_full'
  | CallEndReason

/** A call that ended at the carrier before its media stream connected: `call_` and its final status. */
export type CallEndReason = 'call_completed' | 'call_busy' | 'call_no_answer' | 'call_canceled' | 'call_failed'

const CALL_END_REASONS: Readonly<Record<FinalCallStatus, CallEndReason>> = {
  completed: 'call_completed',
  busy: 'call_busy',
  'no-answer': 'call_no_answer',
  canceled: 'call_canceled',
  failed: 'call_failed',
}

/** Every {@link EndReason}, for validating a filter (the type check below fails when one is missing). */
export const END_REASONS = [
  'client_disconnected',
  'hangup',
  'caller_hangup',
  'duration_timeout',
  'silence_timeout',
  'shutdown',
  'error',
  'media_timeout',
  'transferred',
  'transfer_caller_hangup',
  'transfer_human_hangup',
  'lease_expired',
  'superseded',
  'stream_not_connected',
  'call_status_timeout',
  'carrier_error',
  'dial_queue_full',
  'call_completed',
  'call_busy',
  'call_no_answer',
  'call_canceled',
  'call_failed',
] as const satisfies readonly EndReason[]

// Compile-time: a reason added to the type but not to the list is an error here.
const everyReasonListed: Record<Exclude<EndReason, (typeof END_REASONS)[number]>, never> = {}
void everyReasonListed

/** `no-answer` -> `call_no_answer`: the end_reason of a call that ended with this status before connecting. */
export function callEndReason(status: FinalCallStatus): EndReason {
  return CALL_END_REASONS[status]
}
