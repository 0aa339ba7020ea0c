/**
 * Call status lifecycle and Twilio-compatible status callbacks.
 * queued -> initiated -> ringing -> in-progress -> completed | busy | no-answer | canceled | failed
 */
import type { FinalCallStatus } from '../../core/call-status.js'
import type { CarrierCallStatus, CarrierFormParams, CarrierStatusParseResult, CarrierStatusUpdate } from '../carrier.js'

/** Every status, in lifecycle order (finals last). */
export const CALL_STATUSES: readonly CarrierCallStatus[] = [
  'queued',
  'initiated',
  'ringing',
  'in-progress',
  'completed',
  'busy',
  'no-answer',
  'canceled',
  'failed',
]

const RANK: Readonly<Record<CarrierCallStatus, number>> = {
  queued: 0,
  initiated: 1,
  ringing: 2,
  'in-progress': 3,
  completed: 4,
  busy: 4,
  'no-answer': 4,
  canceled: 4,
  failed: 4,
}

/** True when `value` is a known call status. */
export function isCallStatus(value: unknown): value is CarrierCallStatus {
  return typeof value === 'string' && Object.hasOwn(RANK, value)
}

/** True for statuses after which nothing else happens to the call. */
export function isFinalStatus(status: CarrierCallStatus): status is FinalCallStatus {
  return RANK[status] === 4
}

/** True when a call may move from `from` to `to` (forwards only; finals are terminal). */
export function canTransition(from: CarrierCallStatus, to: CarrierCallStatus): boolean {
  if (isFinalStatus(from)) return false
  return RANK[to] > RANK[from]
}

/**
 * The status to store when `incoming` arrives while the call is `current`. Callbacks can arrive
 * out of order (a late `ringing` after `in-progress`): a call never moves backwards, and the first
 * final status wins.
 */
export function nextStatus(current: CarrierCallStatus | undefined, incoming: CarrierCallStatus): CarrierCallStatus {
  if (current === undefined) return incoming
  return canTransition(current, incoming) ? incoming : current
}

/** Parse a status callback form (`CallSid`, `CallStatus`, `CallDuration`, `Direction`, ...). */
export function parseStatusCallback(params: CarrierFormParams): CarrierStatusParseResult {
  const callSid = first(params.CallSid)
  if (!callSid) return { ok: false, reason: 'missing_call_sid' }
  const rawStatus = first(params.CallStatus)
  if (!rawStatus) return { ok: false, reason: 'missing_status' }
  const status = rawStatus.toLowerCase()
  if (!isCallStatus(status)) return { ok: false, reason: 'unknown_status' }
  const stamp = first(params.Timestamp)
  const date = stamp === undefined ? undefined : new Date(stamp)
  return {
    ok: true,
    update: {
      callSid,
      accountSid: first(params.AccountSid),
      status,
      direction: first(params.Direction),
      from: first(params.From),
      to: first(params.To),
      callDurationSec: toInt(first(params.CallDuration)),
      sequenceNumber: toInt(first(params.SequenceNumber)),
      timestamp: date === undefined || Number.isNaN(date.getTime()) ? undefined : date,
      sipResponseCode: toInt(first(params.SipResponseCode)),
      answeredBy: first(params.AnsweredBy),
      event: eventOf(status),
    },
  }
}

/** The status-callback event a status belongs to (`in-progress` is reported as `answered`). */
export function eventOf(status: CarrierCallStatus): CarrierStatusUpdate['event'] {
  switch (status) {
    case 'queued':
      return 'queued'
    case 'initiated':
      return 'initiated'
    case 'ringing':
      return 'ringing'
    case 'in-progress':
      return 'answered'
    default:
      return 'completed'
  }
}

function first(value: string | readonly string[] | undefined): string | undefined {
  if (value === undefined) return undefined
  return typeof value === 'string' ? value : value[0]
}

function toInt(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,15}$/.test(value)) return undefined
  return Number(value)
}
