/**
 * Placing an outbound call (initiate_outbound) from one of the agent's numbers. The session is authorized at
 * once with its concurrency slot (a ringing call counts against the limit, and its lease is renewed while it
 * rings), then the carrier's Calls API is asked to dial. When the callee answers, the carrier posts the voice
 * hook, which gives the same session a stream key (call-admission.ts). A from number of the organization's SIP
 * trunk is dialled through the trunk instead, after the same checks, authorization and pacing
 * (sip-outbound-calls.ts).
 */
import { voxError } from '../../core/errors.js'
import { normalisePhoneNumber, type NormalisedNumber } from '../../core/phone.js'
import { getAgentRow } from '../store/agents.js'
import { setCallSid, setMachineDetection } from '../store/carrier-calls.js'
import { balanceUsedUp, carrierCredentials, getOrganizationRow } from '../store/organizations.js'
import { atConcurrencyLimit } from '../store/leases.js'
import { findPhoneNumber } from '../store/phone-numbers.js'
import { doNotCallEntry } from '../store/do-not-call.js'
import { authorizeSession } from '../admission/authorize.js'
import type { CallDeps } from '../admission/call-deps.js'
import { endWaitingCall } from '../admission/waiting-calls.js'
import { takeDialSlot } from '../store/outbound-pacing.js'
import { waitForDial } from './dial-gate.js'
import { dialThroughTrunk, outboundTrunkFor, sipPlacementError } from './sip-outbound-calls.js'

/** What initiate_outbound asks for. */
export interface OutboundCallRequest {
  readonly organizationId: string
  readonly agentId: string
  /** The agent's number and the number to call, as the client sent them (checked here). */
  readonly from: string
  readonly to: string
  /** Where the carrier posts the voice hook when the callee answers. */
  readonly voiceHookUrl: string
  /** Where the carrier posts the call's status callbacks. */
  readonly statusCallbackUrl: string
  /** Where the carrier posts its answering machine detection verdict; undefined: no detection. */
  readonly machineDetectionUrl?: string | undefined
  /** Aborted when the client went away: a call still waiting for its dial slot is not placed. */
  readonly signal?: AbortSignal | undefined
  /** A campaign's call: the contact it is for (stored on the session) and the session's metadata. */
  readonly campaign?: { readonly contactId: string; readonly metadata: Record<string, unknown> } | undefined
}

/**
 * A placed call, or the carrier's refusal to dial. The refusal carries the carrier's own error: only the side
 * that knows the carrier can read it.
 */
export type OutboundCallResult =
  | { readonly ok: true; readonly conversationId: string; readonly sessionId: string; readonly callSid: string }
  | { readonly ok: false; readonly refusal: 'carrier_refused'; readonly cause: unknown }

/**
 * Places an outbound call. A request that cannot be placed throws a registered error, checked in this order:
 * the request (invalid_phone_number, invalid_agent_id, phone_number_not_assigned, do_not_call), the process
 * (shutting_down), the account (insufficient_balance, then concurrency_limit), its setup
 * (carrier_not_configured), then the agent's config at authorization (validation_failed, bad_request when
 * carrier clients are off). When the carrier refuses to dial, the session ends at once (`carrier_error`, its
 * slot released) and the refusal is returned.
 */
export async function placeOutboundCall(
  deps: Pick<
    CallDeps,
    | 'db'
    | 'log'
    | 'carrier'
    | 'sessions'
    | 'watchdog'
    | 'webhookPolicy'
    | 'webhookDelivery'
    | 'ringTimeoutSec'
    | 'statusGraceMs'
    | 'egress'
    | 'outboundQueueMaxWaitMs'
    | 'sipDialer'
    | 'sipCredentialsKey'
  >,
  request: OutboundCallRequest,
): Promise<OutboundCallResult> {
  const from = e164(request.from, 'from_phone_number')
  const to = e164(request.to, 'to_phone_number')
  const agent = await getAgentRow(deps.db, request.organizationId, request.agentId)
  if (agent === undefined) throw voxError('invalid_agent_id', `invalid agent id: ${request.agentId}`)
  const assignment = await findPhoneNumber(deps.db, from.e164)
  if (assignment === undefined || assignment.agent_id !== agent.id) {
    throw voxError('phone_number_not_assigned', `from_phone_number ${from.e164} is not assigned to agent ${agent.id}`)
  }
  if ((await doNotCallEntry(deps.db, request.organizationId, to.e164)) !== undefined) {
    throw voxError('do_not_call', `${to.e164} is on the organization's do-not-call list`)
  }
  // Refused before anything is done, so the same request is safe to send again (another replica places it).
  if (deps.sessions.isDraining) throw voxError('shutting_down', undefined, { retryAfterSeconds: 1 })
  const org = await getOrganizationRow(deps.db, request.organizationId)
  if (org === undefined) throw voxError('invalid_api_key')
  // What the account allows is said before what its setup lacks: an organization that may not call at all
  // hears 402 or 429, not a setup error it would fix in vain. authorizeSession checks both again, the limit in
  // the transaction that takes the slot, so this early look decides only which error comes first.
  if (balanceUsedUp(org)) throw voxError('insufficient_balance')
  if (await atConcurrencyLimit(deps.db, org.id, org.max_concurrent_sessions)) throw voxError('concurrency_limit')
  const credentials = carrierCredentials(org)
  // A from number of the organization's SIP trunk goes out through the trunk (sip-outbound-calls.ts).
  const trunk = await outboundTrunkFor(deps, org, from.e164, credentials !== undefined)
  if (credentials === undefined && trunk === undefined) {
    throw voxError(
      'carrier_not_configured',
      'carrier credentials are not configured for this organization: store them with PUT /admin/v1/organizations/{id}/carrier',
    )
  }

  const auth = await authorizeSession(
    deps.db,
    {
      organizationId: request.organizationId,
      agentId: agent.id,
      // Outbound sessions keep the API's naming: from = the agent's number, to = the person called.
      origin: {
        channel: trunk === undefined ? 'carrier' : 'sip',
        direction: 'outbound-api',
        fromPhoneNumber: from.e164,
        fromPhoneCountry: from.country ?? null,
        toPhoneNumber: to.e164,
        toPhoneCountry: to.country ?? null,
        callStatus: 'queued',
        campaignContactId: request.campaign?.contactId ?? null,
      },
      metadata: request.campaign?.metadata,
      holdLease: { owner: deps.sessions.keeper.owner, ttlMs: deps.sessions.keeper.ttlMs },
    },
    { webhookPolicy: deps.webhookPolicy, egress: deps.egress },
  )
  if (request.machineDetectionUrl !== undefined) await setMachineDetection(deps.db, auth.sessionId)
  // Pacing: the carrier account takes so many calls per second. The session is authorized first (a call waiting
  // to dial counts against the concurrency limit, as a ringing one does), then the dial slot is taken, and only
  // the wait sits between the slot's time and the create request: anything slow in between would let two calls
  // reach the carrier closer together than the rate.
  const slot = await takeDialSlot(deps.db, org.id, deps.outboundQueueMaxWaitMs).catch(async (e: unknown) => {
    await endWaitingCall(deps, auth.sessionId, { endReason: 'error' }).catch(() => undefined)
    throw e
  })
  if (!slot.ok) {
    await endWaitingCall(deps, auth.sessionId, { endReason: 'dial_queue_full' })
    throw voxError('outbound_queue_full', undefined, { retryAfterSeconds: slot.retryAfterMs / 1000 })
  }
  let dialedAt: Date
  try {
    dialedAt = await waitForDial(deps.db, org.id, slot.dialAtEpochMs, request.signal)
  } catch (e) {
    await endWaitingCall(deps, auth.sessionId, { endReason: 'client_disconnected' }).catch(() => undefined)
    throw e
  }
  if (trunk !== undefined) {
    const dialed = await dialThroughTrunk(deps, {
      sessionId: auth.sessionId,
      trunk,
      from: from.e164,
      to: to.e164,
    })
    if (!dialed.ok) throw sipPlacementError(dialed.cause)
    deps.log.info(
      { session_id: auth.sessionId, agent_id: agent.id, to: to.e164, trunk_id: trunk.id },
      'outbound call placed through the SIP trunk',
    )
    return { ok: true, conversationId: auth.conversationId, sessionId: auth.sessionId, callSid: dialed.callId }
  }
  if (credentials === undefined) throw voxError('carrier_not_configured')
  let call: { readonly sid: string; readonly status: string }
  try {
    call = await deps.carrier.callsClient(credentials).createCall({
      to: to.e164,
      from: from.e164,
      url: request.voiceHookUrl,
      statusCallback: request.statusCallbackUrl,
      statusCallbackEvents: ['initiated', 'ringing', 'answered', 'completed'],
      timeoutSec: deps.ringTimeoutSec,
      ...(request.machineDetectionUrl !== undefined && { machineDetection: { callbackUrl: request.machineDetectionUrl } }),
    })
  } catch (e) {
    await endWaitingCall(deps, auth.sessionId, { endReason: 'carrier_error', callStatus: 'failed' }).catch((err: unknown) =>
      deps.log.error({ err, session_id: auth.sessionId }, 'could not release the slot of a call the carrier refused'),
    )
    return { ok: false, refusal: 'carrier_refused', cause: e }
  }
  await setCallSid(deps.db, auth.sessionId, call.sid, call.status, dialedAt)
  // If no final status ever arrives, the slot is released after the ring timeout and a grace period.
  deps.watchdog.watch(auth.sessionId, deps.ringTimeoutSec * 1000 + deps.statusGraceMs, 'call_status_timeout')
  deps.log.info({ session_id: auth.sessionId, call_sid: call.sid, agent_id: agent.id, to: to.e164 }, 'outbound call placed')
  return { ok: true, conversationId: auth.conversationId, sessionId: auth.sessionId, callSid: call.sid }
}

function e164(value: string, name: string): NormalisedNumber {
  const n = normalisePhoneNumber(value)
  if (n === undefined) throw voxError('invalid_phone_number', `${name} is not a valid E.164 phone number: ${value.slice(0, 64)}`)
  return n
}
