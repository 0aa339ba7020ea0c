/**
 * `POST /v1/agents/carrier/status`: the carrier reports call progress (queued, initiated, ringing,
 * in-progress, completed, busy, no-answer, failed, canceled). The stored `call_status` only moves forward.
 * A final status for a call whose media stream never connected ends its session: the concurrency slot is
 * released and `end_reason` is `call_<status>` (`call_busy`, `call_no_answer`, `call_completed`, ...).
 * A final status for a connected call that is still live in this process ends it as `caller_hangup` (the
 * stream's own `stop` normally gets there first).
 */
import type { Middleware } from 'koa'
import type { CarrierCallStatus } from '../carrier.js'
import { voxError } from '../../core/errors.js'
import { advanceCallStatus, findSessionByCallSid } from '../../gateway/store/carrier-calls.js'
import { carrierCredentials, getOrganizationRow } from '../../gateway/store/organizations.js'
import { readCarrierRequest, requireSignature } from './carrier-request.js'
import { callEndReason } from '../../core/end-reason.js'
import type { CarrierContext } from './carrier-context.js'
import { endWaitingCall } from './waiting-call-end.js'

/** Path of the status callback. */
export const STATUS_CALLBACK_PATH = '/v1/agents/carrier/status'

/** Koa handler of status callbacks. Answers 204; 403 for a bad signature; 400 for an unreadable callback. */
export function statusCallback(c: CarrierContext): Middleware {
  return async (ctx) => {
    const request = await readCarrierRequest(ctx, c.carrier, c.publicUrl)
    const parsed = c.carrier.parseStatusCallback(request.params)
    if (!parsed.ok) throw voxError('validation_failed', `status callback refused: ${parsed.reason.replace(/_/g, ' ')}`)
    const update = parsed.update
    const session = await findSessionByCallSid(c.db, update.callSid)
    if (session === undefined) {
      c.log.debug({ call_sid: update.callSid, status: update.status }, 'status callback for an unknown call ignored')
      ctx.status = 204
      return
    }
    const org = await getOrganizationRow(c.db, session.organization_id)
    const stored = org && carrierCredentials(org)
    if (stored !== undefined) requireSignature(ctx, c.carrier, request, stored.authToken, c.log)

    const moved = await advanceCallStatus<CarrierCallStatus>(c.db, session.id, (current) => c.carrier.nextStatus(current, update.status))
    const status = (moved?.row.call_status ?? update.status) as CarrierCallStatus
    c.log.debug({ session_id: session.id, call_sid: update.callSid, incoming: update.status, stored: status }, 'call status')
    if (c.carrier.isFinalStatus(status)) {
      const row = moved?.row ?? session
      if (row.status === 'authorized') {
        await endWaitingCall(c, session.id, { endReason: callEndReason(status), callStatus: status })
      } else if (row.status === 'connected') {
        const live = c.sessions.live.get(session.id)
        if (live !== undefined && !live.isEnded) void live.end('caller_hangup')
      }
    }
    ctx.status = 204
  }
}
