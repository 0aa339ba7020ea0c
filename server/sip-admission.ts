/**
 * The SIP endpoint's admission over the store: the packet's source address finds the trunks that allow it
 * (`trunksForSource`, any organization), else the digest user name finds a trunk without an allow-list (digest
 * from anywhere; challenged first when the INVITE has no credentials); the dialled number (Request-URI user part, else To's) finds its agent
 * through the phone number assignments, and the number must belong to one of those trunks' organizations (a
 * number of another organization is as unknown as a missing one: 404). A trunk with a user name and password
 * asks for digest: no credentials get a 401 challenge, wrong ones 403. Nothing is stored until `open`, which
 * authorizes the session the way a carrier call is (balance, concurrency, `clients.carrier`), holding its slot,
 * and connects it over the call's transport.
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
import { credentialOnlyTrunks, sipTrunkPasswords, trunksForSource } from '../gateway/store/sip-trunks.js'
import { DigestServer } from '../transports/sip/digest-auth.js'
import { parseAuthHeader } from '../transports/sip/digest-header-codec.js'
import type { SipAdmission, SipAdmissionDecision, SipSource } from '../transports/sip/sip-admission.js'
import { getHeader, type SipRequest } from '../transports/sip/sip-message.js'
import { parseNameAddr, parseUri, unescapeUser } from '../transports/sip/sip-uri-codec.js'
import { type SipCallRefusal, sipRefusal } from './sip-refusals.js'

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
}

/** The store-backed admission the gateway wires into its SIP endpoint. */
export function storeSipAdmission(deps: SipAdmissionDeps): SipAdmission {
  // Nonces are checked by the replica that issued them (the retried INVITE comes back to the same address).
  const digest = new DigestServer({ realm: deps.realm, secret: randomBytes(32) })
  return (source, invite) => admit(deps, digest, source, invite)
}

async function admit(deps: SipAdmissionDeps, digest: DigestServer, source: SipSource, invite: SipRequest): Promise<SipAdmissionDecision> {
  const log = deps.log.child({ sip_call_id: getHeader(invite, 'Call-ID')?.slice(0, 64), source: source.address })
  const refuse = (why: SipCallRefusal, fields: Record<string, unknown> = {}, headers: { name: string; value: string }[] = []) => {
    // A challenge is the first half of a digest exchange, not a refusal; the session manager counts its own.
    const counted = why === 'auth_required' || fields.counted === true
    if (!counted) deps.sessions.metrics.sessionRefused('sip', why)
    log.info({ ...fields, counted: undefined, reason: why }, 'SIP call refused')
    return sipRefusal(why, headers)
  }
  const bySource = await trunksForSource(deps.db, source.address)
  // Trunks without an allow-list take digest from anywhere: those of the user name the credentials give (all of
  // them while there are none yet). A stranger is challenged before any number is looked up, so it cannot tell
  // numbers that exist from numbers that do not.
  const authorization = getHeader(invite, 'Authorization')
  const username = authorization === undefined ? undefined : (parseAuthHeader(authorization)?.params.get('username') ?? '')
  const anywhere = await credentialOnlyTrunks(deps.db, username)
  if (bySource.length === 0) {
    if (anywhere.length === 0) return refuse('unknown_source')
    if (authorization === undefined) {
      return refuse(
        'auth_required',
        {},
        digest.challenges().map((value) => ({ name: 'WWW-Authenticate', value })),
      )
    }
  }
  const trunks = [...bySource, ...anywhere]
  const to = dialledNumber(invite)
  const assignment = to === undefined ? undefined : await findPhoneNumber(deps.db, to.e164)
  const trunk = assignment === undefined ? undefined : trunks.find((t) => t.organization_id === assignment.organization_id)
  if (to === undefined || assignment === undefined || trunk === undefined) return refuse('not_in_service', { to: to?.e164 })

  if (trunk.inbound_username !== null && trunk.inbound_password_sealed !== null) {
    const checked = checkDigest(deps, digest, trunk, invite)
    if (checked === 'no_key') return refuse('auth_failed', { trunk_id: trunk.id, why: 'SIP_CREDENTIALS_KEY cannot open the password' })
    if (!checked.ok) {
      if (checked.reason === 'missing' || checked.reason === 'stale_nonce') {
        const challenges = digest.challenges({ stale: checked.reason === 'stale_nonce' })
        return refuse(
          'auth_required',
          { trunk_id: trunk.id },
          challenges.map((value) => ({ name: 'WWW-Authenticate', value })),
        )
      }
      return refuse('auth_failed', { trunk_id: trunk.id, why: checked.reason })
    }
  }

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

/** The digest check against the trunk's user and password; `no_key` when the password cannot be opened. */
function checkDigest(deps: SipAdmissionDeps, digest: DigestServer, trunk: SipTrunkRow, invite: SipRequest) {
  let password: string | null
  try {
    if (deps.credentialsKey === undefined) return 'no_key' as const
    password = sipTrunkPasswords(trunk, deps.credentialsKey).inbound
  } catch {
    return 'no_key' as const
  }
  if (password === null) return 'no_key' as const
  const username = trunk.inbound_username
  return digest.check(getHeader(invite, 'Authorization'), { method: invite.method, uri: invite.uri }, (user) =>
    user === username ? { password } : undefined,
  )
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
