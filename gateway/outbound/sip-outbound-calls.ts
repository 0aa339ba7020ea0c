/**
 * initiate_outbound through the organization's SIP trunk. A from number belongs to a trunk when the trunk's
 * `outbound.from_number` is that number; failing that, when the organization has no carrier credentials, every
 * number assigned to its agents goes out through its oldest trunk with an outbound URI (`outboundTrunkFor`).
 * The session is authorized and paced exactly as a carrier call is (concurrency slot held while it rings, the
 * organization's dial slot), then the SIP endpoint dials the trunk. Its progress moves `call_status` as the
 * carrier's status callbacks do (initiated, ringing, in-progress, completed); an answer opens the waiting
 * session over the call's transport (channel `sip`); busy, no answer, failure and cancel end the waiting session
 * with the carrier path's `call_<status>` reasons and its `session.end` webhook. The ring timeout CANCELs the
 * INVITE (no-answer). Answering machine detection: the session is marked as for a carrier call, so the
 * gateway's own beep detector runs on the callee's audio; the carrier's human/machine verdict has no SIP twin.
 * The SIP endpoint is reached through `SipTrunkDialer`, which the server wires in.
 */
import type { CallStatus } from '../../core/call-status.js'
import { voxError } from '../../core/errors.js'
import { callEndReason } from '../../core/end-reason.js'
import { advanceCallStatus } from '../store/carrier-calls.js'
import type { OrganizationRow, SipTrunkRow } from '../store/schema.js'
import { rekeyWaitingSession } from '../store/session-keys.js'
import { listSipTrunks, sipTrunkPasswords } from '../store/sip-trunks.js'
import type { CallDeps } from '../admission/call-deps.js'
import type { SipOutboundDeps, SipTrunkDialFailure, SipTrunkTransport } from '../sessions/sip/sip-trunk-dialer.js'
import { endWaitingCall, type WaitingCallDeps } from '../admission/waiting-calls.js'

type Deps = WaitingCallDeps & Pick<CallDeps, 'ringTimeoutSec'> & SipOutboundDeps

/** The trunk `from` goes out through, by the rule above; undefined: the carrier places the call. */
export async function outboundTrunkFor(
  deps: Pick<CallDeps, 'db'> & SipOutboundDeps,
  org: OrganizationRow,
  from: string,
  hasCarrierCredentials: boolean,
): Promise<SipTrunkRow | undefined> {
  if (deps.sipDialer?.() === undefined) return undefined
  const trunks = (await listSipTrunks(deps.db, org.id)).filter((t) => t.outbound_uri !== null)
  return trunks.find((t) => t.outbound_from_number === from) ?? (hasCarrierCredentials ? undefined : trunks[0])
}

/** The mapping of a failed attempt to the carrier path's call statuses. */
export function sipFailureStatus(failure: SipTrunkDialFailure, ringTimedOut: boolean): Exclude<CallStatus, 'completed'> & string {
  switch (failure.kind) {
    case 'cancelled':
      return ringTimedOut ? 'no-answer' : 'canceled'
    case 'timeout':
    case 'bad_answer':
      return 'failed'
    case 'rejected':
      if (failure.status === 486 || failure.status === 600 || failure.status === 603) return 'busy'
      if (failure.status === 408 || failure.status === 480 || failure.status === 487) return 'no-answer'
      return 'failed'
  }
}

/**
 * Dials the authorized, paced session's call through `trunk`. Resolves once the INVITE is on its way, with the
 * SIP Call-ID; a call that cannot be placed at all (a bad URI, no RTP port) ends its session as `failed`.
 */
export async function dialThroughTrunk(
  deps: Deps,
  call: { sessionId: string; trunk: SipTrunkRow; from: string; to: string },
): Promise<{ ok: true; callId: string } | { ok: false; cause: string }> {
  const dialer = deps.sipDialer?.()
  const { sessionId, trunk } = call
  const log = deps.log.child({ session_id: sessionId, trunk_id: trunk.id })
  const fail = async (status: Exclude<CallStatus, 'completed'>, why: string) => {
    log.info({ call_status: status, why }, 'SIP outbound call not answered')
    await endWaitingCall(deps, sessionId, { endReason: callEndReason(status as 'failed'), callStatus: status }).catch((e: unknown) =>
      log.error({ err: e }, 'could not end a SIP outbound call'),
    )
  }
  const status = (s: CallStatus) =>
    advanceCallStatus<CallStatus>(deps.db, sessionId, (current) => deps.carrier.nextStatus(current, s)).catch((e: unknown) =>
      log.warn({ err: e }, 'could not store the call status'),
    )
  let password: string | null = null
  try {
    password = deps.sipCredentialsKey === undefined ? null : sipTrunkPasswords(trunk, deps.sipCredentialsKey).outbound
  } catch {
    log.warn('SIP_CREDENTIALS_KEY cannot open the trunk password: dialling without credentials')
  }
  let ringTimer: NodeJS.Timeout | undefined
  let ringTimedOut = false
  const uri = trunk.outbound_uri
  if (dialer === undefined || uri === null) {
    await fail('failed', 'SIP is off')
    return { ok: false, cause: 'SIP is off' }
  }
  const placed = await dialer.dial(
    {
      uri,
      from: call.from,
      to: call.to,
      credentials: trunk.outbound_username !== null && password !== null ? { username: trunk.outbound_username, password } : undefined,
      mediaEncryption: trunk.media_encryption,
    },
    {
      onProgress: () => void status('ringing'),
      onFailed: (failure) => {
        clearTimeout(ringTimer)
        const detail = failure.kind === 'rejected' ? `${failure.status} ${failure.reason}` : failure.kind
        void fail(sipFailureStatus(failure, ringTimedOut), detail.slice(0, 100))
      },
      onAnswered: (transport) => {
        clearTimeout(ringTimer)
        void connect(deps, sessionId, transport, log)
      },
      onEnded: () => void status('completed'),
    },
  )
  if ('refused' in placed) {
    await fail('failed', placed.refused)
    return { ok: false, cause: placed.refused }
  }
  await status('initiated')
  ringTimer = setTimeout(() => {
    ringTimedOut = true
    placed.cancel()
  }, deps.ringTimeoutSec * 1000)
  ringTimer.unref()
  log.info({ sip_call_id: placed.callId }, 'SIP outbound call placed')
  return { ok: true, callId: placed.callId }
}

/**
 * The API error for a call the trunk could not be dialled for at all (its session already ended as `failed`,
 * with its session.end webhook): the trunk's URI is unusable (400), or the trunk or this replica cannot take
 * the call now (502).
 */
export function sipPlacementError(cause: string): Error {
  if (cause === 'bad_uri' || cause === 'unsupported_transport' || cause === 'forbidden_address') {
    return voxError('carrier_rejected', `the SIP trunk's outbound URI cannot be dialled (${cause})`)
  }
  return voxError('carrier_unavailable', `the SIP trunk cannot be reached now (${cause})`)
}

/** The callee answered: the waiting session gets a key and opens over the call's transport; refused, BYE. */
async function connect(deps: Deps, sessionId: string, transport: SipTrunkTransport, log: CallDeps['log']): Promise<void> {
  try {
    const rekeyed = await rekeyWaitingSession(deps.db, {
      sessionId,
      leaseOwner: deps.sessions.keeper.owner,
      leaseTtlMs: deps.sessions.keeper.ttlMs,
      callStatus: 'in-progress',
    })
    const opened =
      rekeyed === undefined ? undefined : await deps.sessions.open(rekeyed.key, transport, { ipAddress: null, countryCode: null })
    if (opened === undefined || !opened.ok) {
      log.info({ why: opened === undefined ? 'not waiting' : opened.reason }, 'SIP outbound call answered but its session could not open')
      transport.close('error')
      return
    }
    transport.attach(opened.session)
    log.info('SIP outbound call answered')
  } catch (e) {
    log.error({ err: e }, 'SIP outbound call answered but its session failed to open')
    transport.close('error')
  }
}
