/**
 * `POST /v1/agents/{agent_id}/calls/initiate_outbound`: places a call from one of the agent's numbers.
 * The session is authorized at once with its concurrency slot (a ringing call counts against the limit,
 * and its lease is renewed while it rings), then the carrier's Calls API is asked to dial. When the callee
 * answers, the carrier posts the voice hook, which gives the same session a stream key.
 */
import Router from '@koa/router'
import { z } from 'zod'
import { CarrierApiError, type CarrierCall } from '../carrier.js'
import type { ApiState } from '../../api/auth.js'
import { readJsonObject } from '../../api/http/body.js'
import { parseOr400 } from '../../api/http/validate.js'
import { voxError, type ErrorCode } from '../../core/errors.js'
import { normalisePhoneNumber, type NormalisedNumber } from '../../core/phone.js'
import { authorizeSession } from '../../gateway/sessions/authorize.js'
import { getAgentRow } from '../../gateway/store/agents.js'
import { setCallSid } from '../../gateway/store/carrier-calls.js'
import { carrierCredentials, getOrganizationRow } from '../../gateway/store/organizations.js'
import { findPhoneNumber } from '../../gateway/store/phone-numbers.js'
import type { CarrierContext } from './carrier-context.js'
import { STATUS_CALLBACK_PATH } from './status-callback.js'
import { VOICE_HOOK_PATH } from './voice-hook.js'
import { endWaitingCall } from './waiting-call-end.js'

const bodySchema = z.strictObject({
  from_phone_number: z.string().min(1).max(64),
  to_phone_number: z.string().min(1).max(64),
})

/** What initiate_outbound answers. */
export interface OutboundCall {
  conversation_id: string
  session_id: string
  call_sid: string
}

/** The initiate_outbound route, for the API-key-protected /v1 router. */
export function outboundRouter(c: CarrierContext): Router<ApiState> {
  const r = new Router<ApiState>()
  r.post('/v1/agents/:agent_id/calls/initiate_outbound', async (ctx) => {
    const body = parseOr400(bodySchema, await readJsonObject(ctx))
    ctx.body = await initiateOutbound(c, {
      organizationId: ctx.state.organizationId,
      agentId: ctx.params.agent_id as string,
      from: body.from_phone_number,
      to: body.to_phone_number,
    })
  })
  return r
}

/** Places an outbound call; throws registered errors (400, 402, 429, carrier errors). */
export async function initiateOutbound(
  c: CarrierContext,
  input: { organizationId: string; agentId: string; from: string; to: string },
): Promise<OutboundCall> {
  const from = e164(input.from, 'from_phone_number')
  const to = e164(input.to, 'to_phone_number')
  const agent = await getAgentRow(c.db, input.organizationId, input.agentId)
  if (agent === undefined) throw voxError('invalid_agent_id', `invalid agent id: ${input.agentId}`)
  const assignment = await findPhoneNumber(c.db, from.e164)
  if (assignment === undefined || assignment.agent_id !== agent.id) {
    throw voxError('phone_number_not_assigned', `from_phone_number ${from.e164} is not assigned to agent ${agent.id}`)
  }
  const org = await getOrganizationRow(c.db, input.organizationId)
  const stored = org && carrierCredentials(org)
  if (stored === undefined) {
    throw voxError(
      'carrier_not_configured',
      'carrier credentials are not configured for this organization: store them with PUT /admin/v1/organizations/{id}/carrier',
    )
  }
  if (c.sessions.isDraining) throw voxError('shutting_down')

  const auth = await authorizeSession(
    c.db,
    {
      organizationId: input.organizationId,
      agentId: agent.id,
      // Outbound sessions keep the API's naming: from = the agent's number, to = the person called.
      origin: {
        channel: 'carrier',
        direction: 'outbound-api',
        fromPhoneNumber: from.e164,
        fromPhoneCountry: from.country ?? null,
        toPhoneNumber: to.e164,
        toPhoneCountry: to.country ?? null,
        callStatus: 'queued',
      },
      holdLease: { owner: c.sessions.keeper.owner, ttlMs: c.sessions.keeper.ttlMs },
    },
    { allowInsecureWebhooks: c.allowInsecureWebhooks },
  )
  const base = c.publicUrl.replace(/\/+$/, '')
  let call: CarrierCall
  try {
    call = await c.carrier.callsClient(stored).createCall({
      to: to.e164,
      from: from.e164,
      url: `${base}${VOICE_HOOK_PATH}`,
      statusCallback: `${base}${STATUS_CALLBACK_PATH}`,
      statusCallbackEvents: ['initiated', 'ringing', 'answered', 'completed'],
      timeoutSec: c.ringTimeoutSec,
    })
  } catch (e) {
    await endWaitingCall(c, auth.sessionId, { endReason: 'carrier_error', callStatus: 'failed' }).catch((err: unknown) =>
      c.log.error({ err, session_id: auth.sessionId }, 'could not release the slot of a call the carrier refused'),
    )
    throw carrierError(e, c)
  }
  await setCallSid(c.db, auth.sessionId, call.sid, call.status)
  // If no final status ever arrives, the slot is released after the ring timeout and a grace period.
  c.watchdog.watch(auth.sessionId, c.ringTimeoutSec * 1000 + c.statusGraceMs, 'call_status_timeout')
  c.log.info({ session_id: auth.sessionId, call_sid: call.sid, agent_id: agent.id, to: to.e164 }, 'outbound call placed')
  return { conversation_id: auth.conversationId, session_id: auth.sessionId, call_sid: call.sid }
}

function e164(value: string, name: string): NormalisedNumber {
  const n = normalisePhoneNumber(value)
  if (n === undefined) throw voxError('invalid_phone_number', `${name} is not a valid E.164 phone number: ${value.slice(0, 64)}`)
  return n
}

const CARRIER_CODES: Record<CarrierApiError['code'], ErrorCode> = {
  carrier_rejected: 'carrier_rejected',
  carrier_auth_failed: 'carrier_auth_failed',
  carrier_rate_limited: 'carrier_rate_limited',
  carrier_unavailable: 'carrier_unavailable',
  carrier_timeout: 'carrier_timeout',
  carrier_bad_response: 'carrier_error',
}

function carrierError(e: unknown, c: CarrierContext): Error {
  if (!(e instanceof CarrierApiError)) {
    c.log.error({ err: e }, 'outbound call failed')
    return voxError('internal')
  }
  c.log.warn({ code: e.code, status: e.status, carrier_code: e.carrierCode, attempts: e.attempts }, 'carrier refused the outbound call')
  const code = CARRIER_CODES[e.code]
  const carrierCode = e.carrierCode === undefined ? '' : ` (carrier error ${e.carrierCode})`
  switch (code) {
    case 'carrier_rejected':
      return voxError(code, `the carrier rejected the call: ${e.message}${carrierCode}`, { cause: e })
    case 'carrier_auth_failed':
      return voxError(code, undefined, { cause: e })
    default:
      return voxError(code, `${voxError(code).message} (${e.message})`, { cause: e })
  }
}
