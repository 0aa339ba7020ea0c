/**
 * `POST /v1/agents/carrier/twiml`: the carrier asks what to do with a call. An inbound call to an assigned
 * number is authorized through the same path as authorize_session (taking its concurrency slot now); an
 * answered outbound call reuses the session created by initiate_outbound. Either way the answer connects a
 * media stream whose URL holds a new one-time key. Calls that cannot be taken hear a short refusal.
 */
import type { Context, Middleware } from 'koa'
import type { CarrierCallStatus, CarrierFormParams } from '../carrier.js'
import { authorizeSession } from '../../gateway/sessions/authorize.js'
import { isVoxgateError, voxError } from '../../core/errors.js'
import { normalisePhoneNumber } from '../../core/phone.js'
import { findPhoneNumber } from '../../gateway/store/phone-numbers.js'
import { carrierCredentials, getOrganizationRow } from '../../gateway/store/organizations.js'
import { findSessionByCallSid } from '../../gateway/store/carrier-calls.js'
import { rekeyWaitingSession } from '../../gateway/store/session-states.js'
import type { SessionRow } from '../../gateway/store/schema.js'
import { field, readCarrierRequest, requireSignature, type CarrierRequest } from './carrier-request.js'
import { REFUSAL_TEXT, type CallRefusal } from './refusals.js'
import type { CarrierContext } from './carrier-context.js'

/** Path of the voice hook (SPEC). */
export const VOICE_HOOK_PATH = '/v1/agents/carrier/twiml'

/** Koa handler of the voice hook. */
export function voiceHook(c: CarrierContext): Middleware {
  return async (ctx) => {
    const request = await readCarrierRequest(ctx, c.carrier, c.publicUrl)
    const p = request.params
    const direction = field(p, 'Direction')
    const callSid = field(p, 'CallSid')
    if (direction?.startsWith('outbound') && callSid !== undefined) return answerOutbound(c, ctx, request, callSid)

    const to = normalisePhoneNumber(field(p, 'To'))
    const assignment = to === undefined ? undefined : await findPhoneNumber(c.db, to.e164)
    if (to === undefined || assignment === undefined) {
      return refuse(c, ctx, 'not_in_service', { to: field(p, 'To')?.slice(0, 32), call_sid: callSid })
    }
    const org = await getOrganizationRow(c.db, assignment.organization_id)
    if (org === undefined) return refuse(c, ctx, 'not_in_service', { to: to.e164, call_sid: callSid })
    const stored = carrierCredentials(org)
    if (stored !== undefined) requireSignature(ctx, c.carrier, request, stored.authToken, c.log)
    else c.log.debug({ organization_id: org.id }, 'voice hook accepted unsigned: no carrier credentials stored')

    const rawFrom = field(p, 'From')
    if (direction === undefined || rawFrom === undefined) {
      throw voxError('validation_failed', 'voice hook needs Direction, From and To fields')
    }
    const logFields = { to: to.e164, call_sid: callSid, organization_id: org.id, agent_id: assignment.agent_id }
    if (c.sessions.isDraining) return refuse(c, ctx, 'shutting_down', logFields)

    // The carrier repeats a voice hook it got no answer to: the call keeps its one session and slot.
    if (callSid !== undefined) {
      const existing = await findSessionByCallSid(c.db, callSid)
      if (existing !== undefined && existing.organization_id === org.id && existing.status !== 'ended') {
        return rekeyAndAnswer(c, ctx, existing, p, logFields)
      }
    }

    const from = normalisePhoneNumber(rawFrom)
    const status = hookStatus(c, p)
    try {
      const auth = await authorizeSession(
        c.db,
        {
          organizationId: org.id,
          agentId: assignment.agent_id,
          origin: {
            channel: 'carrier',
            direction,
            // Withheld or malformed caller ids ("anonymous") are kept as the carrier sent them.
            fromPhoneNumber: from?.e164 ?? rawFrom.slice(0, 64),
            fromPhoneCountry: country(field(p, 'FromCountry')) ?? from?.country ?? null,
            toPhoneNumber: to.e164,
            toPhoneCountry: country(field(p, 'ToCountry')) ?? to.country ?? null,
            callSid: callSid ?? null,
            callStatus: status ?? null,
          },
          holdLease: { owner: c.sessions.keeper.owner, ttlMs: c.sessions.keeper.ttlMs },
        },
        { allowInsecureWebhooks: c.allowInsecureWebhooks },
      )
      c.log.info({ ...logFields, session_id: auth.sessionId, direction }, 'carrier call authorized')
      answerStream(c, ctx, auth.sessionId, auth.clientSessionKey)
    } catch (e) {
      return refuse(c, ctx, refusalFor(e), logFields, e)
    }
  }
}

async function answerOutbound(c: CarrierContext, ctx: Context, request: CarrierRequest, callSid: string): Promise<void> {
  const session = await findSessionByCallSid(c.db, callSid)
  if (session === undefined) return refuse(c, ctx, 'call_not_waiting', { call_sid: callSid, why: 'unknown call sid' })
  const org = await getOrganizationRow(c.db, session.organization_id)
  const stored = org && carrierCredentials(org)
  // initiate_outbound needs credentials, so a call voxgate placed always has them; refuse anything else.
  if (stored === undefined) return refuse(c, ctx, 'call_not_waiting', { call_sid: callSid, why: 'no carrier credentials' })
  requireSignature(ctx, c.carrier, request, stored.authToken, c.log)
  const logFields = { call_sid: callSid, organization_id: session.organization_id, agent_id: session.agent_id }
  if (c.sessions.isDraining) return refuse(c, ctx, 'shutting_down', logFields)
  return rekeyAndAnswer(c, ctx, session, request.params, logFields)
}

async function rekeyAndAnswer(
  c: CarrierContext,
  ctx: Context,
  session: SessionRow,
  p: CarrierFormParams,
  logFields: Record<string, unknown>,
): Promise<void> {
  const incoming = hookStatus(c, p)
  const current = (session.call_status ?? undefined) as CarrierCallStatus | undefined
  const rekeyed = await rekeyWaitingSession(c.db, {
    sessionId: session.id,
    leaseOwner: c.sessions.keeper.owner,
    leaseTtlMs: c.sessions.keeper.ttlMs,
    callStatus: incoming === undefined ? undefined : c.carrier.nextStatus(current, incoming),
    fromPhoneCountry: country(field(p, 'FromCountry')),
    toPhoneCountry: country(field(p, 'ToCountry')),
  })
  if (rekeyed === undefined) {
    return refuse(c, ctx, 'call_not_waiting', { ...logFields, session_id: session.id, status: session.status })
  }
  c.log.info({ ...logFields, session_id: session.id, direction: session.direction }, 'carrier call answered: new stream key')
  answerStream(c, ctx, session.id, rekeyed.key)
}

function answerStream(c: CarrierContext, ctx: Context, sessionId: string, key: string): void {
  c.watchdog.watch(sessionId, c.streamConnectTimeoutMs, 'stream_not_connected')
  ctx.status = 200
  ctx.type = c.carrier.markup.contentType
  // The stream URL holds a one-time key: no cache may keep or replay it.
  ctx.set('Cache-Control', 'no-store')
  ctx.body = c.carrier.markup.connectStream(c.carrier.mediaStream.streamUrl(c.publicUrl, key))
}

function refuse(c: CarrierContext, ctx: Context, reason: CallRefusal, fields: Record<string, unknown>, err?: unknown): void {
  if (reason === 'error') c.log.error({ ...fields, reason, err }, 'carrier call refused')
  else c.log.info({ ...fields, reason }, 'carrier call refused')
  ctx.status = 200
  ctx.type = c.carrier.markup.contentType
  ctx.set('Cache-Control', 'no-store')
  ctx.body = c.carrier.markup.sayAndHangup(REFUSAL_TEXT[reason])
}

function refusalFor(e: unknown): CallRefusal {
  if (!isVoxgateError(e)) return 'error'
  switch (e.code) {
    case 'invalid_agent_id':
      return 'not_in_service'
    case 'bad_request':
      return 'clients_disabled'
    case 'insufficient_balance':
      return 'insufficient_balance'
    case 'concurrency_limit':
      return 'concurrency_limit'
    default:
      return 'error'
  }
}

function hookStatus(c: CarrierContext, p: CarrierFormParams): CarrierCallStatus | undefined {
  const parsed = c.carrier.parseStatusCallback(p)
  return parsed.ok ? parsed.update.status : undefined
}

function country(value: string | undefined): string | undefined {
  return value !== undefined && /^[A-Za-z]{2}$/.test(value) ? value.toUpperCase() : undefined
}
