/**
 * Ending a carrier session that never reached its media stream: the slot is released, the reason recorded,
 * and for outbound calls the customer backend hears how the call ended.
 *
 * Webhook rule: `session.end` is sent for a never-connected call only when it was placed with
 * initiate_outbound (busy, no answer, failed, canceled, timed out), so the backend that asked for the call
 * always learns its outcome; it carries `call_status` and `end_reason`, with `started_at` and `duration` null
 * and an empty transcript, and no `session.start` precedes it. An inbound call that hung up before its stream
 * connected had no session.start and gets no webhook (like a browser key that was never used).
 */
import type { CallStatus } from '../../core/call-status.js'
import type { EndReason } from '../../core/end-reason.js'
import { getCarrierCredentials } from '../store/organizations.js'
import type { SessionRow } from '../store/schema.js'
import { endWaitingSession } from '../store/session-ends.js'
import type { CallDeps } from './call-deps.js'
import { sendDetachedSessionEnd } from '../sessions/detached-session-end.js'

/** How a waiting call ends. */
export interface WaitingCallEnd {
  readonly endReason: EndReason
  readonly callStatus?: CallStatus | undefined
  /** Also hang the call up at the carrier (voxgate gave up on it; the carrier may still think it is live). */
  readonly hangup?: boolean
}

/** What ending a waiting call uses. */
export type WaitingCallDeps = Pick<CallDeps, 'db' | 'log' | 'carrier' | 'watchdog' | 'webhookPolicy' | 'webhookDelivery' | 'sessions'>

/** Ends a session still waiting for its stream; undefined when it had already connected or ended. */
export async function endWaitingCall(deps: WaitingCallDeps, sessionId: string, end: WaitingCallEnd): Promise<SessionRow | undefined> {
  deps.watchdog.settle(sessionId)
  const row = await endWaitingSession(deps.db, sessionId, { endReason: end.endReason, callStatus: end.callStatus })
  if (row === undefined) return undefined
  deps.log.info(
    { session_id: row.id, call_sid: row.call_sid, direction: row.direction, reason: end.endReason, call_status: row.call_status },
    'carrier call ended before its media stream connected',
  )
  if (end.hangup && row.call_sid !== null) void hangupAtCarrier(deps, row)
  if (row.direction === 'outbound-api') void notifyEnd(deps, row)
  return row
}

async function hangupAtCarrier(deps: WaitingCallDeps, row: SessionRow): Promise<void> {
  try {
    const credentials = await getCarrierCredentials(deps.db, row.organization_id)
    if (credentials === undefined || row.call_sid === null) return
    await deps.carrier.callsClient(credentials).hangup(row.call_sid, { signal: AbortSignal.timeout(30_000) })
  } catch (e) {
    deps.log.warn({ err: e, session_id: row.id, call_sid: row.call_sid }, 'could not hang up the call at the carrier')
  }
}

function notifyEnd(deps: WaitingCallDeps, row: SessionRow): Promise<void> {
  return sendDetachedSessionEnd({ ...deps, metrics: deps.sessions.metrics }, row, { call_status: row.call_status })
}
