/**
 * The SIP endpoint's admission over the store, in the order docs/reference/sip.md gives ("Order of checks"): a blocked
 * source is refused at once; the packet's source address finds the trunks that allow it (`trunksForSource`, any
 * organization), and trunks without an allow-list take digest from anywhere; an allow-list without a password
 * trusts the address, so the dialled number (Request-URI user part, else To's) is looked up and a number of such a
 * trunk's organization is admitted. Every other call must prove a password first: without credentials it is
 * challenged (401) whatever the number, wrong credentials are refused (403) whatever the number and counted
 * towards the source's lockout, and only the right password lets the number be looked up in its trunk's
 * organization (a number of another organization is as unknown as a missing one: 404). Nothing is stored until
 * `open`, which authorizes the session the way a carrier call is (balance, concurrency, `clients.carrier`),
 * holding its slot, and connects it over the call's transport.
 */
import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Log } from '../core/log.js'
import { normalisePhoneNumber, type NormalisedNumber } from '../core/phone.js'
import type { UrlPolicy } from '../pipeline/index.js'
import { authorizeSession } from '../gateway/sessions/authorize.js'
import { refusalFor } from '../gateway/sessions/call-admission.js'
import type { SessionManager } from '../gateway/sessions/session-manager.js'
import { findPhoneNumber } from '../gateway/store/phone-numbers.js'
import type { Database, SipTrunkRow } from '../gateway/store/schema.js'
import { credentialOnlyTrunks, trunksForSource } from '../gateway/store/sip-trunks.js'
import { DigestServer } from '../transports/sip/calls/digest-auth.js'
import type { SipAdmission, SipAdmissionDecision, SipSource } from '../transports/sip/calls/sip-admission.js'
import { getHeader, type SipRequest } from '../transports/sip/message/sip-message.js'
import { parseNameAddr, parseUri, unescapeUser } from '../transports/sip/message/sip-uri-codec.js'
import { SipAuthLockout, type SipAuthMetrics } from './sip-auth-lockout.js'
import { type SipCallRefusal, sipRefusal } from './sip-refusals.js'
import { asksDigest, checkTrunkDigest } from './sip-trunk-digest.js'

/** What the admission reads and opens sessions with. */
export interface SipAdmissionDeps {
  readonly db: Kysely<Database>
  readonly log: Log
  readonly sessions: SessionManager
  /** SIP_CREDENTIALS_KEY: opens the trunks' sealed passwords. */
  readonly credentialsKey: Buffer | undefined
  readonly webhookPolicy: UrlPolicy
  /** The digest realm (SIP_PUBLIC_HOST). */
  readonly realm: string
  /** Failed digest answers and blocks, counted. */
  readonly authMetrics?: SipAuthMetrics | undefined
  /** The lockout (tests pass one on an injected clock); one on the store by default. */
  readonly lockout?: SipAuthLockout
}

/** The store-backed admission the gateway wires into its SIP endpoint. */
export function storeSipAdmission(deps: SipAdmissionDeps): SipAdmission {
  // Nonces are checked by the replica that issued them (the retried INVITE comes back to the same address).
  const digest = new DigestServer({ realm: deps.realm, secret: randomBytes(32) })
  const lockout = deps.lockout ?? new SipAuthLockout({ db: deps.db, log: deps.log, metrics: deps.authMetrics })
  // A source this replica knows is blocked is answered at once: no store round trip, no digest, no log line.
  return (source, invite) => (lockout.isBlocked(source.address) ? blockedRefusal(deps) : admit(deps, digest, lockout, source, invite))
}

function blockedRefusal(deps: SipAdmissionDeps): SipAdmissionDecision {
  deps.sessions.metrics.sessionRefused('sip', 'auth_blocked')
  return sipRefusal('auth_blocked')
}

async function admit(
  deps: SipAdmissionDeps,
  digest: DigestServer,
  lockout: SipAuthLockout,
  source: SipSource,
  invite: SipRequest,
): Promise<SipAdmissionDecision> {
  const log = deps.log.child({ sip_call_id: getHeader(invite, 'Call-ID')?.slice(0, 64), source: source.address })
  const refuse = (why: SipCallRefusal, fields: Record<string, unknown> = {}, headers: { name: string; value: string }[] = []) => {
    // A challenge is the first half of a digest exchange, not a refusal; the session manager counts its own.
    const counted = why === 'auth_required' || fields.counted === true
    if (!counted) deps.sessions.metrics.sessionRefused('sip', why)
    log.info({ ...fields, counted: undefined, reason: why }, 'SIP call refused')
    return sipRefusal(why, headers)
  }
  const challenge = (stale: boolean, fields: Record<string, unknown> = {}) =>
    refuse(
      'auth_required',
      fields,
      digest.challenges({ stale, source: source.address }).map((value) => ({ name: 'WWW-Authenticate', value })),
    )

  const bySource = await trunksForSource(deps.db, source.address)
  // Trunks without an allow-list take digest from anywhere, whatever user name the credentials give: a name no
  // trunk has is a wrong password like any other, so a stranger cannot tell names that exist either.
  const anywhere = await credentialOnlyTrunks(deps.db)
  if (bySource.length === 0 && anywhere.length === 0) return refuse('unknown_source')
  const open = bySource.filter((t) => !asksDigest(t))
  const guarded = [...bySource.filter(asksDigest), ...anywhere]
  const authorization = getHeader(invite, 'Authorization')
  // Challenge first: with no address trusted on its own, nothing is looked up before a password is proved.
  if (authorization === undefined && open.length === 0) return challenge(false)

  const to = dialledNumber(invite)
  const assignment = to === undefined ? undefined : await findPhoneNumber(deps.db, to.e164)
  const ownedBy = (t: SipTrunkRow) => assignment !== undefined && t.organization_id === assignment.organization_id
  let trunk = open.find(ownedBy)
  if (trunk === undefined && guarded.length > 0) {
    // The number is no number of a trunk that trusts this address: the answer is the password's, not the number's.
    if (authorization === undefined) return challenge(false)
    if (await lockout.blocked(source.address)) return blockedRefusal(deps)
    const checked = checkTrunkDigest({
      digest,
      credentialsKey: deps.credentialsKey,
      guarded,
      authorization,
      request: { method: invite.method, uri: invite.uri, source: source.address },
      preferredOrg: assignment?.organization_id,
    })
    if (!checked.ok) {
      if (checked.reason === 'no_key')
        return refuse('auth_failed', { trunk_id: checked.trunkId, why: 'SIP_CREDENTIALS_KEY cannot open the password' })
      await lockout.failed(source.address, checked.trunkId, checked.reason)
      if (checked.reason === 'stale_nonce' || checked.reason === 'replayed')
        return challenge(true, { trunk_id: checked.trunkId, why: checked.reason })
      return refuse('auth_failed', { trunk_id: checked.trunkId, why: checked.reason })
    }
    await lockout.succeeded(source.address, checked.trunk.id)
    if (ownedBy(checked.trunk)) trunk = checked.trunk
  }
  if (to === undefined || assignment === undefined || trunk === undefined) return refuse('not_in_service', { to: to?.e164 })

  const from = callerNumber(invite)
  const fields = { trunk_id: trunk.id, organization_id: trunk.organization_id, agent_id: assignment.agent_id, to: to.e164 }
  return {
    admit: true,
    mediaEncryption: trunk.media_encryption,
    open: async (transport) => {
      if (deps.sessions.isDraining) return refuse('shutting_down', fields)
      let key: string
      try {
        const auth = await authorizeSession(
          deps.db,
          {
            organizationId: trunk.organization_id,
            agentId: assignment.agent_id,
            origin: {
              channel: 'sip',
              direction: 'inbound',
              fromPhoneNumber: from.number,
              fromPhoneCountry: from.country ?? null,
              toPhoneNumber: to.e164,
              toPhoneCountry: to.country ?? null,
            },
            holdLease: { owner: deps.sessions.keeper.owner, ttlMs: deps.sessions.keeper.ttlMs },
          },
          { webhookPolicy: deps.webhookPolicy },
        )
        key = auth.clientSessionKey
      } catch (e) {
        const why = refusalFor(e)
        if (why === 'error') log.error({ ...fields, err: e }, 'SIP call could not be authorized')
        return refuse(why, fields)
      }
      const opened = await deps.sessions.open(key, transport, { ipAddress: source.address, countryCode: null })
      if (!opened.ok) {
        const why = opened.reason === 'unknown' || opened.reason === 'used' || opened.reason === 'expired' ? 'error' : opened.reason
        return refuse(why, { ...fields, counted: true })
      }
      log.info({ ...fields, session_id: opened.session.id }, 'SIP call connected')
      return { admit: true, session: opened.session }
    },
  }
}

/** The Request-URI's user part, else the To header's, as E.164 (a PBX often drops the `+`). */
export function dialledNumber(invite: SipRequest): NormalisedNumber | undefined {
  const toValue = getHeader(invite, 'To')
  const candidates = [parseUri(invite.uri)?.user, toValue === undefined ? undefined : parseNameAddr(toValue)?.uri.user]
  for (const raw of candidates) {
    const n = asNumber(raw)
    if (n !== undefined) return n
  }
  return undefined
}

/** The caller's number from From, as E.164 when it is one, else as sent (a withheld or SIP-only caller). */
function callerNumber(invite: SipRequest): { number: string | null; country: string | undefined } {
  const from = getHeader(invite, 'From')
  const user = from === undefined ? undefined : parseNameAddr(from)?.uri.user
  const n = asNumber(user)
  if (n !== undefined) return { number: n.e164, country: n.country }
  const raw = user === undefined ? null : (unescapeUser(user) ?? user)
  return { number: raw === null ? null : raw.slice(0, 64), country: undefined }
}

function asNumber(user: string | undefined): NormalisedNumber | undefined {
  if (user === undefined) return undefined
  const text = (unescapeUser(user) ?? '').split(';')[0]!.trim()
  if (text === '') return undefined
  return normalisePhoneNumber(text) ?? (/^\d{6,15}$/.test(text) ? normalisePhoneNumber(`+${text}`) : undefined)
}
