/**
 * `POST /v1/agents/{agent_id}/calls/initiate_outbound`: places a call from one of the agent's numbers. Sessions
 * check the request, take the slot and dial (outbound-calls.ts); this route reads the body, tells the carrier
 * where to post the call's webhooks, and turns a carrier's refusal into the API's error.
 */
import type Router from '@koa/router'
import { newRouter } from '../http/router.js'
import { z } from 'zod'
import { CarrierApiError } from '../../carrier/carrier.js'
import { voxError, type ErrorCode } from '../../core/errors.js'
import type { Log } from '../../core/log.js'
import type { CallDeps } from '../../gateway/admission/call-deps.js'
import { placeOutboundCall } from '../../gateway/outbound/outbound-calls.js'
import type { ApiState } from '../auth.js'
import { readJsonObject } from '../http/body.js'
import { parseOr400 } from '../http/validate.js'
import { MACHINE_DETECTION_PATH, STATUS_CALLBACK_PATH, VOICE_HOOK_PATH } from './carrier-hooks.js'

/** Body of initiate_outbound (also the API reference's schema). */
export const outboundCallSchema = z.strictObject({
  from_phone_number: z.string().min(1).max(64),
  to_phone_number: z.string().min(1).max(64),
  // An addition to the SPEC: answering machine detection (the carrier's, asynchronous, and the gateway's beep detector).
  machine_detection: z.boolean().optional(),
})

/** What initiate_outbound answers. */
export interface OutboundCall {
  conversation_id: string
  session_id: string
  call_sid: string
}

/** The initiate_outbound route, for the API-key-protected /v1 router. */
export function outboundCallsRouter(deps: { calls: CallDeps; publicUrl: string }): Router<ApiState> {
  const r = newRouter<ApiState>()
  r.post('/v1/agents/:agent_id/calls/initiate_outbound', async (ctx) => {
    const body = parseOr400(outboundCallSchema, await readJsonObject(ctx))
    const base = deps.publicUrl.replace(/\/+$/, '')
    // A request waiting for its dial slot (pacing) is dropped when its client goes away.
    const gone = new AbortController()
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) gone.abort(new Error('client went away'))
    })
    const placed = await placeOutboundCall(deps.calls, {
      organizationId: ctx.state.organizationId,
      agentId: ctx.params.agent_id as string,
      from: body.from_phone_number,
      to: body.to_phone_number,
      voiceHookUrl: `${base}${VOICE_HOOK_PATH}`,
      statusCallbackUrl: `${base}${STATUS_CALLBACK_PATH}`,
      signal: gone.signal,
      machineDetectionUrl: body.machine_detection === true ? `${base}${MACHINE_DETECTION_PATH}` : undefined,
    })
    if (!placed.ok) throw carrierError(placed.cause, deps.calls.log)
    const call: OutboundCall = { conversation_id: placed.conversationId, session_id: placed.sessionId, call_sid: placed.callSid }
    ctx.body = call
  })
  return r
}

const CARRIER_CODES: Record<CarrierApiError['code'], ErrorCode> = {
  carrier_rejected: 'carrier_rejected',
  carrier_auth_failed: 'carrier_auth_failed',
  carrier_rate_limited: 'carrier_rate_limited',
  carrier_unavailable: 'carrier_unavailable',
  carrier_timeout: 'carrier_timeout',
  carrier_bad_response: 'carrier_error',
}

function carrierError(e: unknown, log: Log): Error {
  if (!(e instanceof CarrierApiError)) {
    log.error({ err: e }, 'outbound call failed')
    return voxError('internal')
  }
  log.warn({ code: e.code, status: e.status, carrier_code: e.carrierCode, attempts: e.attempts }, 'carrier refused the outbound call')
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
