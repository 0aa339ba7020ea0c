/**
 * Call admission: what to do with a call the carrier's voice hook asks about. An inbound call to an assigned
 * number is authorized through the same path as authorize_session, taking its concurrency slot now; a voice
 * hook the carrier repeats re-keys the session the call already has; an answered outbound call re-keys the
 * session initiate_outbound created. Either way the call gets a new one-time stream key and a deadline for
 * its media stream. A call that cannot be taken is refused with a reason, which the route speaks, or, when only
 * this process cannot take it now (`shutting_down`), answers with a retryable error so another replica does.
 *
 * Finding who a call is for comes first and admitting it second: the route checks the carrier's signature in
 * between, with the credentials of the organization the lookup found.
 */
import type { CallStatus } from '../../core/call-status.js'
import type { CarrierCredentials } from '../../core/carrier-credentials.js'
import type { Log } from '../../core/log.js'
import { normalisePhoneNumber, type NormalisedNumber } from '../../core/phone.js'
import { findSessionByCallSid } from '../store/carrier-calls.js'
import { carrierCredentials, getCarrierCredentials, getOrganizationRow } from '../store/organizations.js'
import { findPhoneNumber } from '../store/phone-numbers.js'
import type { SessionRow } from '../store/schema.js'
import { rekeyWaitingSession } from '../store/session-keys.js'
import { authorizePhoneCall, type CallRefusal } from './phone-call.js'
import type { CallDeps } from './call-deps.js'
import { isDatabaseUnavailable } from '../store/database-errors.js'

/** A refused call. */
export interface RefusedCall {
  readonly ok: false
  readonly refusal: CallRefusal
}

/** The voice hook's outcome: the session and the one-time key of its media stream, or a refusal. */
export type CallAdmission = { readonly ok: true; readonly sessionId: string; readonly key: string } | RefusedCall

/** What a voice hook says about its call (a carrier's `CarrierVoiceHook` is one). */
export interface HookCall {
  readonly callSid: string | undefined
  readonly direction: string | undefined
  readonly from: string | undefined
  readonly to: string | undefined
  readonly fromCountry: string | undefined
  readonly toCountry: string | undefined
  readonly status: CallStatus | undefined
}

/** Who a dialled number belongs to, and the credentials its voice hook is signed with. */
export interface DialledNumber {
  readonly ok: true
  readonly organizationId: string
  readonly agentId: string
  readonly to: NormalisedNumber
  /** Undefined when the organization stored none: its voice hooks are accepted unsigned. */
  readonly credentials: CarrierCredentials | undefined
}

/** The waiting session of an answered outbound call, and the credentials its voice hook is signed with. */
export interface AnsweredCall {
  readonly ok: true
  readonly session: SessionRow
  readonly credentials: CarrierCredentials
}

type AdmissionDeps = Pick<CallDeps, 'db' | 'log' | 'carrier' | 'sessions' | 'webhookPolicy' | 'watchdog' | 'streamConnectTimeoutMs'>

/** The agent and organization holding the dialled number; `not_in_service` when none does. */
export async function findDialledNumber(deps: Pick<CallDeps, 'db' | 'log'>, call: HookCall): Promise<DialledNumber | RefusedCall> {
  const to = normalisePhoneNumber(call.to)
  const assignment = to === undefined ? undefined : await findPhoneNumber(deps.db, to.e164)
  if (to === undefined || assignment === undefined) {
    return refuse(deps.log, 'not_in_service', { to: call.to?.slice(0, 32), call_sid: call.callSid })
  }
  const org = await getOrganizationRow(deps.db, assignment.organization_id)
  if (org === undefined) return refuse(deps.log, 'not_in_service', { to: to.e164, call_sid: call.callSid })
  return { ok: true, organizationId: org.id, agentId: assignment.agent_id, to, credentials: carrierCredentials(org) }
}

/**
 * Admits an inbound call to a dialled number (its signature checked): authorizes a session that holds its
 * concurrency slot from now on, or re-keys the session a repeated voice hook already has.
 */
export async function admitInboundCall(
  deps: AdmissionDeps,
  dialled: DialledNumber,
  call: HookCall & { readonly direction: string; readonly from: string },
): Promise<CallAdmission> {
  const logFields = { to: dialled.to.e164, call_sid: call.callSid, organization_id: dialled.organizationId, agent_id: dialled.agentId }
  if (deps.sessions.isDraining) return refuse(deps.log, 'shutting_down', logFields)

  // The carrier repeats a voice hook it got no answer to: the call keeps its one session and slot.
  if (call.callSid !== undefined) {
    const existing = await findSessionByCallSid(deps.db, call.callSid)
    if (existing !== undefined && existing.organization_id === dialled.organizationId && existing.status !== 'ended') {
      return answerWaitingCall(deps, existing, call, logFields)
    }
  }

  const from = normalisePhoneNumber(call.from)
  const auth = await authorizePhoneCall(deps, {
    organizationId: dialled.organizationId,
    agentId: dialled.agentId,
    origin: {
      channel: 'carrier',
      direction: call.direction,
      // Withheld or malformed caller ids ("anonymous") are kept as the carrier sent them.
      fromPhoneNumber: from?.e164 ?? call.from.slice(0, 64),
      fromPhoneCountry: call.fromCountry ?? from?.country ?? null,
      toPhoneNumber: dialled.to.e164,
      toPhoneCountry: call.toCountry ?? dialled.to.country ?? null,
      callSid: call.callSid ?? null,
      callStatus: call.status ?? null,
    },
  })
  // The database away (a restart): the voice hook answers 503, which a balancer or the carrier retries.
  if (!auth.ok && isDatabaseUnavailable(auth.err)) throw auth.err
  if (!auth.ok) return refuse(deps.log, auth.refusal, logFields, auth.err)
  deps.log.info({ ...logFields, session_id: auth.sessionId, direction: call.direction }, 'carrier call authorized')
  return awaitStream(deps, auth.sessionId, auth.key)
}

/** The session of an answered outbound call; `call_not_waiting` for a call voxgate did not place. */
export async function findAnsweredCall(deps: Pick<CallDeps, 'db' | 'log'>, callSid: string): Promise<AnsweredCall | RefusedCall> {
  const session = await findSessionByCallSid(deps.db, callSid)
  if (session === undefined) return refuse(deps.log, 'call_not_waiting', { call_sid: callSid, why: 'unknown call sid' })
  const credentials = await getCarrierCredentials(deps.db, session.organization_id)
  // initiate_outbound needs credentials, so a call voxgate placed always has them; refuse anything else.
  if (credentials === undefined) return refuse(deps.log, 'call_not_waiting', { call_sid: callSid, why: 'no carrier credentials' })
  return { ok: true, session, credentials }
}

/** Answers an outbound call (its signature checked): the session that waited while it rang gets a stream key. */
export async function answerOutboundCall(deps: AdmissionDeps, answered: AnsweredCall, call: HookCall): Promise<CallAdmission> {
  const { session } = answered
  const logFields = { call_sid: call.callSid, organization_id: session.organization_id, agent_id: session.agent_id }
  if (deps.sessions.isDraining) return refuse(deps.log, 'shutting_down', logFields)
  return answerWaitingCall(deps, session, call, logFields)
}

/** A session still waiting for its stream gets a new key; its slot moves to this process and is counted once. */
async function answerWaitingCall(
  deps: AdmissionDeps,
  session: SessionRow,
  call: HookCall,
  logFields: Record<string, unknown>,
): Promise<CallAdmission> {
  const current = (session.call_status ?? undefined) as CallStatus | undefined
  const rekeyed = await rekeyWaitingSession(deps.db, {
    sessionId: session.id,
    leaseOwner: deps.sessions.keeper.owner,
    leaseTtlMs: deps.sessions.keeper.ttlMs,
    callStatus: call.status === undefined ? undefined : deps.carrier.nextStatus(current, call.status),
    fromPhoneCountry: call.fromCountry,
    toPhoneCountry: call.toCountry,
  })
  if (rekeyed === undefined) {
    return refuse(deps.log, 'call_not_waiting', { ...logFields, session_id: session.id, status: session.status })
  }
  deps.log.info({ ...logFields, session_id: session.id, direction: session.direction }, 'carrier call answered: new stream key')
  return awaitStream(deps, session.id, rekeyed.key)
}

/** The call now waits for its media stream; if the stream does not connect in time, the watchdog ends it. */
function awaitStream(deps: Pick<CallDeps, 'watchdog' | 'streamConnectTimeoutMs'>, sessionId: string, key: string): CallAdmission {
  deps.watchdog.watch(sessionId, deps.streamConnectTimeoutMs, 'stream_not_connected')
  return { ok: true, sessionId, key }
}

function refuse(log: Log, refusal: CallRefusal, fields: Record<string, unknown>, err?: unknown): RefusedCall {
  if (refusal === 'error') log.error({ ...fields, reason: refusal, err }, 'carrier call refused')
  else log.info({ ...fields, reason: refusal }, 'carrier call refused')
  return { ok: false, refusal }
}
