/**
 * The admission of a SIP call over the store, in the order docs/reference/sip.md gives ("Order of checks"), on the plain
 * values the SIP transport reads from the INVITE: a blocked source is refused at once; the packet's source address
 * finds the trunks that allow it (`trunksForSource`, any organization), and trunks without an allow-list take
 * digest from anywhere; an allow-list without a password trusts the address, so the dialled number is looked up
 * and a number of such a trunk's organization is admitted. Every other call must prove a password first: without
 * credentials it is challenged whatever the number, wrong credentials are refused whatever the number and counted
 * towards the source's lockout, and only the right password lets the number be looked up in its trunk's
 * organization (a number of another organization is as unknown as a missing one). Nothing is stored until `open`,
 * which authorizes the session the way a carrier call is (balance, concurrency, `clients.carrier`), holding its
 * slot, and connects it over the call's transport. The digest itself (nonces, the header's syntax) is the SIP
 * transport's: it is handed in as `InviteDigest`; so is the answer on the wire to each refusal.
 */
import type { Kysely } from 'kysely'
import type { Log } from '../../core/log.js'
import type { NormalisedNumber } from '../../core/phone.js'
import type { UrlPolicy } from '../../pipeline/index.js'
import type { CallSession } from '../sessions/call-session.js'
import type { SessionTransport } from '../sessions/ports/session-port.js'
import type { OpenRefusal, SessionManager } from '../sessions/session-manager.js'
import { findPhoneNumber } from '../store/phone-numbers.js'
import type { Database, SipTrunkRow } from '../store/schema.js'
import { credentialOnlyTrunks, sipTrunkPasswords, trunksForSource } from '../store/sip-trunks.js'
import { authorizePhoneCall, type CallRefusal } from './phone-call.js'
import { SipAuthLockout, type SipAuthMetrics } from './sip-auth-lockout.js'

/** Why a SIP INVITE is refused. */
export type SipCallRefusal =
  | Exclude<CallRefusal, 'call_not_waiting'>
  | Exclude<OpenRefusal, 'unknown' | 'used' | 'expired'>
  /** No trunk allows the source address. */
  | 'unknown_source'
  /** The trunk asks for digest and the INVITE carried none (or a stale nonce): a challenge. */
  | 'auth_required'
  /** The INVITE's digest credentials are wrong. */
  | 'auth_failed'
  /** The source gave too many wrong digest answers and is blocked for a while (sip-auth-lockout.ts). */
  | 'auth_blocked'

/** What the SIP transport reads from an out-of-dialog INVITE. */
export interface SipInviteValues {
  /** The packet's source address, never what the Via claims. */
  readonly source: string
  readonly callId: string | undefined
  /** The Authorization header, as sent. */
  readonly authorization: string | undefined
  /** The dialled number (Request-URI user part, else To's), when it is one. */
  readonly dialled: NormalisedNumber | undefined
  /** The caller's number from From, as E.164 when it is one, else as sent. */
  readonly caller: { readonly number: string | null; readonly country: string | undefined }
}

/** A trunk that asks for digest, as the digest check sees it. */
export interface DigestTrunk {
  readonly id: string
  readonly organizationId: string
  readonly username: string
  /** The inbound password in clear; undefined when SIP_CREDENTIALS_KEY cannot open it. */
  password(): string | undefined
}

/** What an INVITE's credentials prove: a trunk, or why not (`no_key`: the operator's problem, not the caller's). */
export type DigestProof =
  | { readonly ok: true; readonly trunkId: string }
  /** `trunkId`: the trunk whose password was tested (none when the user name is no trunk's). */
  | { readonly ok: false; readonly reason: string; readonly trunkId: string | undefined }

/** The digest side of one INVITE, which the SIP transport answers (the nonces are its own). */
export interface InviteDigest {
  /** The WWW-Authenticate values of a challenge; `stale` when a nonce ran out or was used twice. */
  challenges(stale: boolean): readonly string[]
  /** Checks `authorization` against the trunks with its user name, those of `preferredOrg` first. */
  check(authorization: string, trunks: readonly DigestTrunk[], preferredOrg: string | undefined): DigestProof
}

/** A refused INVITE; `challenges` go out as WWW-Authenticate headers. */
export interface SipTrunkRefusal {
  readonly admit: false
  readonly refusal: SipCallRefusal
  readonly challenges?: readonly string[] | undefined
}

/** An admitted INVITE, not yet a session. */
export interface SipTrunkCall {
  readonly admit: true
  /** The trunk's `media_encryption`. */
  readonly mediaEncryption: SipTrunkRow['media_encryption']
  /** Creates and connects the session over `transport`; a refusal (balance, concurrency, draining) otherwise. */
  open(transport: SessionTransport): Promise<{ readonly admit: true; readonly session: CallSession } | SipTrunkRefusal>
}

/** The admission's answer: at once for a blocked source, else after the store was read. */
export type SipTrunkAdmission = (invite: SipInviteValues, digest: InviteDigest) => SipTrunkRefusal | Promise<SipTrunkRefusal | SipTrunkCall>

/** What the admission reads and opens sessions with. */
export interface SipTrunkAdmissionDeps {
  readonly db: Kysely<Database>
  readonly log: Log
  readonly sessions: SessionManager
  /** SIP_CREDENTIALS_KEY: opens the trunks' sealed passwords. */
  readonly credentialsKey: Buffer | undefined
  readonly webhookPolicy: UrlPolicy
  /** Failed digest answers and blocks, counted. */
  readonly authMetrics?: SipAuthMetrics | undefined
  /** The lockout (tests pass one on an injected clock); one on the store by default. */
  readonly lockout?: SipAuthLockout | undefined
}

/** The store-backed admission of SIP calls. */
export function sipTrunkAdmission(deps: SipTrunkAdmissionDeps): SipTrunkAdmission {
  const lockout = deps.lockout ?? new SipAuthLockout({ db: deps.db, log: deps.log, metrics: deps.authMetrics })
  // A source this replica knows is blocked is answered at once: no store round trip, no digest, no log line.
  return (invite, digest) => (lockout.isBlocked(invite.source) ? blockedRefusal(deps) : admit(deps, lockout, invite, digest))
}

function blockedRefusal(deps: SipTrunkAdmissionDeps): SipTrunkRefusal {
  deps.sessions.metrics.sessionRefused('sip', 'auth_blocked')
  return { admit: false, refusal: 'auth_blocked' }
}

/** A trunk that asks for digest: a user name and a password. */
function asksDigest(trunk: SipTrunkRow): boolean {
  return trunk.inbound_username !== null && trunk.inbound_password_sealed !== null
}

function digestTrunk(trunk: SipTrunkRow, key: Buffer | undefined): DigestTrunk {
  return {
    id: trunk.id,
    organizationId: trunk.organization_id,
    username: trunk.inbound_username ?? '',
    password: () => {
      if (key === undefined) return undefined
      try {
        return sipTrunkPasswords(trunk, key).inbound ?? undefined
      } catch {
        return undefined
      }
    },
  }
}

async function admit(
  deps: SipTrunkAdmissionDeps,
  lockout: SipAuthLockout,
  invite: SipInviteValues,
  digest: InviteDigest,
): Promise<SipTrunkRefusal | SipTrunkCall> {
  const source = invite.source
  const log = deps.log.child({ sip_call_id: invite.callId?.slice(0, 64), source })
  const refuse = (why: SipCallRefusal, fields: Record<string, unknown> = {}, challenges?: readonly string[]): SipTrunkRefusal => {
    // A challenge is the first half of a digest exchange, not a refusal; the session manager counts its own.
    const counted = why === 'auth_required' || fields.counted === true
    if (!counted) deps.sessions.metrics.sessionRefused('sip', why)
    log.info({ ...fields, counted: undefined, reason: why }, 'SIP call refused')
    return { admit: false, refusal: why, challenges }
  }
  const challenge = (stale: boolean, fields: Record<string, unknown> = {}) => refuse('auth_required', fields, digest.challenges(stale))

  const bySource = await trunksForSource(deps.db, source)
  // Trunks without an allow-list take digest from anywhere, whatever user name the credentials give: a name no
  // trunk has is a wrong password like any other, so a stranger cannot tell names that exist either.
  const anywhere = await credentialOnlyTrunks(deps.db)
  if (bySource.length === 0 && anywhere.length === 0) return refuse('unknown_source')
  const open = bySource.filter((t) => !asksDigest(t))
  const guarded = [...bySource.filter(asksDigest), ...anywhere]
  const authorization = invite.authorization
  // Challenge first: with no address trusted on its own, nothing is looked up before a password is proved.
  if (authorization === undefined && open.length === 0) return challenge(false)

  const to = invite.dialled
  const assignment = to === undefined ? undefined : await findPhoneNumber(deps.db, to.e164)
  const ownedBy = (t: SipTrunkRow) => assignment !== undefined && t.organization_id === assignment.organization_id
  let trunk = open.find(ownedBy)
  if (trunk === undefined && guarded.length > 0) {
    // The number is no number of a trunk that trusts this address: the answer is the password's, not the number's.
    if (authorization === undefined) return challenge(false)
    if (await lockout.blocked(source)) return blockedRefusal(deps)
    const checked = digest.check(
      authorization,
      guarded.map((t) => digestTrunk(t, deps.credentialsKey)),
      assignment?.organization_id,
    )
    if (!checked.ok) {
      if (checked.reason === 'no_key')
        return refuse('auth_failed', { trunk_id: checked.trunkId, why: 'SIP_CREDENTIALS_KEY cannot open the password' })
      await lockout.failed(source, checked.trunkId, checked.reason)
      if (checked.reason === 'stale_nonce' || checked.reason === 'replayed')
        return challenge(true, { trunk_id: checked.trunkId, why: checked.reason })
      return refuse('auth_failed', { trunk_id: checked.trunkId, why: checked.reason })
    }
    const proved = guarded.find((t) => t.id === checked.trunkId)
    if (proved !== undefined) {
      await lockout.succeeded(source, proved.id)
      if (ownedBy(proved)) trunk = proved
    }
  }
  if (to === undefined || assignment === undefined || trunk === undefined) return refuse('not_in_service', { to: to?.e164 })

  const admitted = trunk
  const fields = { trunk_id: trunk.id, organization_id: trunk.organization_id, agent_id: assignment.agent_id, to: to.e164 }
  return {
    admit: true,
    mediaEncryption: trunk.media_encryption,
    open: async (transport) => {
      if (deps.sessions.isDraining) return refuse('shutting_down', fields)
      const auth = await authorizePhoneCall(deps, {
        organizationId: admitted.organization_id,
        agentId: assignment.agent_id,
        origin: {
          channel: 'sip',
          direction: 'inbound',
          fromPhoneNumber: invite.caller.number,
          fromPhoneCountry: invite.caller.country ?? null,
          toPhoneNumber: to.e164,
          toPhoneCountry: to.country ?? null,
        },
      })
      if (!auth.ok) {
        if (auth.refusal === 'error') log.error({ ...fields, err: auth.err }, 'SIP call could not be authorized')
        return refuse(auth.refusal, fields)
      }
      const opened = await deps.sessions.open(auth.key, transport, { ipAddress: source, countryCode: null })
      if (!opened.ok) {
        const why = opened.reason === 'unknown' || opened.reason === 'used' || opened.reason === 'expired' ? 'error' : opened.reason
        return refuse(why, { ...fields, counted: true })
      }
      log.info({ ...fields, session_id: opened.session.id }, 'SIP call connected')
      return { admit: true, session: opened.session }
    },
  }
}
