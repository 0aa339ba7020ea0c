/**
 * The carrier's webhooks, signed by the carrier instead of carrying an API key: the voice hook
 * (`POST /v1/agents/carrier/twiml`, what to do with a call) and the status callback
 * (`POST /v1/agents/carrier/status`, call progress). Each reads the request, checks its signature through the
 * Carrier with the credentials of the organization the call belongs to, lets sessions decide, and answers.
 */
import type Router from '@koa/router'
import { newRouter } from '../http/router.js'
import type { Context } from 'koa'
import type { Carrier, CarrierMarkup } from '../../carrier/carrier.js'
import { voxError } from '../../core/errors.js'
import {
  admitInboundCall,
  answerOutboundCall,
  findAnsweredCall,
  findDialledNumber,
  type CallAdmission,
} from '../../gateway/admission/call-admission.js'
import type { CallDeps } from '../../gateway/admission/call-deps.js'
import { applyCallStatus, findReportedCall } from '../../gateway/admission/call-progress.js'
import { readCarrierRequest, requireSignature } from '../http/carrier-request.js'
import { LEG_RELAYED_HEADER, type TransferLegHandler } from '../../gateway/transfer/transfer-legs.js'
import { relayLegCallback } from '../http/leg-callback-relay.js'
import { applyMachineVerdict } from '../../gateway/outbound/machine-detection.js'
import { isRetryableRefusal, REFUSAL_TEXT, RETRYABLE_REFUSALS } from './call-refusals.js'

/** Path of the voice hook (SPEC). */
export const VOICE_HOOK_PATH = '/v1/agents/carrier/twiml'

/** Path of the status callback. */
export const STATUS_CALLBACK_PATH = '/v1/agents/carrier/status'

/** Path of the answering machine detection callback (an addition: outbound calls with `machine_detection`). */
export const MACHINE_DETECTION_PATH = '/v1/agents/carrier/machine_detection'

/** What the carrier webhooks need. */
export interface CarrierHooksDeps {
  readonly calls: CallDeps
  readonly carrier: Carrier
  readonly publicUrl: string
}

/** The voice hook and the status callback: not behind the API key (the carrier signs them instead). */
export function carrierHooksRouter(deps: CarrierHooksDeps): Router {
  const r = newRouter()
  r.post(VOICE_HOOK_PATH, (ctx) => voiceHook(deps, ctx))
  r.post(STATUS_CALLBACK_PATH, (ctx) => statusCallback(deps, ctx))
  r.post(MACHINE_DETECTION_PATH, (ctx) => machineDetectionCallback(deps, ctx))
  return r
}

/**
 * Answers 200 with markup (a stream to connect, or words to speak and hang up); 403 for a bad signature; 503 with
 * `Retry-After` while this replica drains, so a balancer or the carrier tries again elsewhere.
 */
async function voiceHook(deps: CarrierHooksDeps, ctx: Context): Promise<void> {
  const { calls, carrier } = deps
  const request = await readCarrierRequest(ctx, carrier, deps.publicUrl)
  const call = carrier.parseVoiceHook(request.params)
  if (call.outbound && call.callSid !== undefined) {
    const answered = await findAnsweredCall(calls, call.callSid)
    if (!answered.ok) return answer(deps, ctx, answered)
    requireSignature(ctx, carrier, request, answered.credentials.authToken, calls.log)
    return answer(deps, ctx, await answerOutboundCall(calls, answered, call))
  }

  const dialled = await findDialledNumber(calls, call)
  if (!dialled.ok) return answer(deps, ctx, dialled)
  if (dialled.credentials !== undefined) requireSignature(ctx, carrier, request, dialled.credentials.authToken, calls.log)
  else calls.log.debug({ organization_id: dialled.organizationId }, 'voice hook accepted unsigned: no carrier credentials stored')
  const { direction, from } = call
  if (direction === undefined || from === undefined) throw voxError('validation_failed', 'voice hook needs Direction, From and To fields')
  answer(deps, ctx, await admitInboundCall(calls, dialled, { ...call, direction, from }))
}

function answer(deps: CarrierHooksDeps, ctx: Context, admission: CallAdmission): void {
  const { markup, mediaStream } = deps.carrier
  if (admission.ok) return answerMarkup(ctx, markup, markup.connectStream(mediaStream.streamUrl(deps.publicUrl, admission.key)))
  const { refusal } = admission
  deps.calls.sessions.metrics.sessionRefused('carrier', refusal)
  if (isRetryableRefusal(refusal)) {
    const { code, message, retryAfterSeconds } = RETRYABLE_REFUSALS[refusal]
    throw voxError(code, message, { retryAfterSeconds })
  }
  answerMarkup(ctx, markup, markup.sayAndHangup(REFUSAL_TEXT[refusal]))
}

function answerMarkup(ctx: Context, markup: CarrierMarkup, body: string): void {
  ctx.status = 200
  ctx.type = markup.contentType
  // The stream URL holds a one-time key: no cache may keep or replay it.
  ctx.set('Cache-Control', 'no-store')
  ctx.body = body
}

/** Answers 204; 403 for a bad signature; 400 for an unreadable callback. */
async function statusCallback(deps: CarrierHooksDeps, ctx: Context): Promise<void> {
  const { calls, carrier } = deps
  const request = await readCarrierRequest(ctx, carrier, deps.publicUrl)
  const parsed = carrier.parseStatusCallback(request.params)
  if (!parsed.ok) throw voxError('validation_failed', `status callback refused: ${parsed.reason.replace(/_/g, ' ')}`)
  const leg = await transferLegOf(deps, ctx, request.raw)
  if (leg !== undefined) {
    // A warm transfer's human leg: it has no session of its own.
    if (leg.relayedStatus !== undefined) ctx.status = leg.relayedStatus
    else if (leg.handler !== undefined) {
      if (leg.handler.credentials !== undefined) requireSignature(ctx, carrier, request, leg.handler.credentials.authToken, calls.log)
      leg.handler.progress(parsed.update.status)
    }
    if (leg.relayedStatus === undefined) ctx.status = 204
    return
  }
  const reported = await findReportedCall(calls, parsed.update)
  if (reported !== undefined) {
    if (reported.credentials !== undefined) requireSignature(ctx, carrier, request, reported.credentials.authToken, calls.log)
    await applyCallStatus(calls, reported.session, parsed.update)
  }
  ctx.status = 204
}

/** Answers 204; 403 for a bad signature; 400 without `CallSid` and `AnsweredBy`. */
async function machineDetectionCallback(deps: CarrierHooksDeps, ctx: Context): Promise<void> {
  const { calls, carrier } = deps
  const request = await readCarrierRequest(ctx, carrier, deps.publicUrl)
  const parsed = carrier.parseMachineDetection(request.params)
  if (parsed === undefined) throw voxError('validation_failed', 'machine detection callback needs CallSid and AnsweredBy')
  const leg = await transferLegOf(deps, ctx, request.raw)
  if (leg !== undefined) {
    if (leg.relayedStatus !== undefined) ctx.status = leg.relayedStatus
    else if (leg.handler !== undefined) {
      if (leg.handler.credentials !== undefined) requireSignature(ctx, carrier, request, leg.handler.credentials.authToken, calls.log)
      leg.handler.machineVerdict(parsed.verdict)
    }
    if (leg.relayedStatus === undefined) ctx.status = 204
    return
  }
  const reported = await findReportedCall(calls, { callSid: parsed.callSid, status: 'in-progress' })
  if (reported !== undefined) {
    if (reported.credentials !== undefined) requireSignature(ctx, carrier, request, reported.credentials.authToken, calls.log)
    calls.log.debug({ call_sid: parsed.callSid, answered_by: parsed.answeredBy, detection_ms: parsed.detectionMs }, 'machine detection')
    await applyMachineVerdict(calls, reported.session, parsed.verdict, 'carrier')
  }
  ctx.status = 204
}

/**
 * A callback about a warm transfer's human leg names it with `?leg=<token>` (transfer-legs.ts): the leg, or
 * `handler` undefined for a leg no longer waited for; undefined when the callback is about a session's call. A leg
 * another replica waits for gets the callback passed on there (`relayedStatus`: what it answered).
 */
async function transferLegOf(
  deps: CarrierHooksDeps,
  ctx: Context,
  raw: Buffer,
): Promise<{ handler: TransferLegHandler | undefined; relayedStatus?: number } | undefined> {
  const token = ctx.query.leg
  if (typeof token !== 'string') return undefined
  const legs = deps.calls.transferLegs
  const handler = legs?.get(token)
  if (handler !== undefined || legs === undefined || ctx.get(LEG_RELAYED_HEADER) !== '') return { handler }
  const elsewhere = await legs.replicaOf(token)
  if (elsewhere === undefined) return { handler: undefined }
  try {
    return { handler: undefined, relayedStatus: await relayLegCallback(ctx, raw, elsewhere) }
  } catch (err) {
    // The carrier retries a callback that failed; the waiting replica also hears the leg's stream end.
    deps.calls.log.warn({ err }, 'transfer leg callback could not be passed to the replica running the transfer')
    throw voxError('transfer_leg_unreachable')
  }
}
