/**
 * A call's progress as the carrier reports it: status callbacks (queued, initiated, ringing, in-progress,
 * completed, busy, no-answer, failed, canceled) and the media stream's start. The stored `call_status` only
 * moves forward. A final status for a call whose media stream never connected ends its session: the
 * concurrency slot is released and `end_reason` is `call_<status>` (`call_busy`, `call_no_answer`,
 * `call_completed`, ...). A final status for a connected call ends it as `caller_hangup` on whichever replica
 * runs it (the stream's own `stop` normally gets there first).
 */
import type { CallStatus } from '../../core/call-status.js'
import type { CarrierCredentials } from '../../core/carrier-credentials.js'
import { callEndReason } from '../../core/end-reason.js'
import { advanceCallStatus, findSessionByCallSid } from '../store/carrier-calls.js'
import { getCarrierCredentials } from '../store/organizations.js'
import type { SessionRow } from '../store/schema.js'
import type { CallDeps } from './call-deps.js'
import { endWaitingCall, type WaitingCallDeps } from './waiting-calls.js'

/** A status reported for a call. */
export interface StatusReport {
  readonly callSid: string
  readonly status: CallStatus
}

/** The session a status callback is about, and the credentials the callback is signed with. */
export interface ReportedCall {
  readonly session: SessionRow
  /** Undefined when the organization stored none: its callbacks are accepted unsigned. */
  readonly credentials: CarrierCredentials | undefined
}

/** The call a status callback is about; undefined (logged, and ignored) for a call voxgate does not know. */
export async function findReportedCall(deps: Pick<CallDeps, 'db' | 'log'>, report: StatusReport): Promise<ReportedCall | undefined> {
  const session = await findSessionByCallSid(deps.db, report.callSid)
  if (session === undefined) {
    deps.log.debug({ call_sid: report.callSid, status: report.status }, 'status callback for an unknown call ignored')
    return undefined
  }
  return { session, credentials: await getCarrierCredentials(deps.db, session.organization_id) }
}

/** Stores a reported status (never backwards) and, when the stored status is final, ends the call's session. */
export async function applyCallStatus(
  deps: WaitingCallDeps & Pick<CallDeps, 'sessions'>,
  session: SessionRow,
  report: StatusReport,
): Promise<void> {
  const moved = await advanceCallStatus<CallStatus>(deps.db, session.id, (current) => deps.carrier.nextStatus(current, report.status))
  const status = (moved?.row.call_status ?? report.status) as CallStatus
  deps.log.debug({ session_id: session.id, call_sid: report.callSid, incoming: report.status, stored: status }, 'call status')
  if (!deps.carrier.isFinalStatus(status)) return
  const row = moved?.row ?? session
  if (row.status === 'authorized') {
    await endWaitingCall(deps, session.id, { endReason: callEndReason(status), callStatus: status })
  } else if (row.status === 'connected') {
    // The call may run on another replica: the command reaches it there.
    await deps.sessions.endAnywhere(session.id, 'caller_hangup')
  }
}

/** The call's media stream connected (its key opened the session): the waiting deadline no longer applies. */
export function callStreamConnected(deps: Pick<CallDeps, 'watchdog'>, sessionId: string): void {
  deps.watchdog.settle(sessionId)
}

/** The carrier started the call's media stream: the call is in progress. Failures are logged, never thrown. */
export async function callStreamStarted(deps: Pick<CallDeps, 'db' | 'log' | 'carrier'>, sessionId: string): Promise<void> {
  try {
    await advanceCallStatus<CallStatus>(deps.db, sessionId, (current) => deps.carrier.nextStatus(current, 'in-progress'))
  } catch (e) {
    deps.log.warn({ err: e, session_id: sessionId }, 'could not store the call status')
  }
}
