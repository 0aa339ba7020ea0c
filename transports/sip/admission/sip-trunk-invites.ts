/**
 * The gateway's admission of SIP calls, as the SIP endpoint asks it (`SipAdmission`): the INVITE is read into
 * plain values (who sent it, its credentials, the dialled and calling numbers), the gateway's store-backed
 * admission (gateway/admission/sip-trunk-admission.ts) decides, and each refusal becomes its SIP answer
 * (sip-refusals.ts). The digest's nonces are this replica's own.
 */
import { randomBytes } from 'node:crypto'
import { normalisePhoneNumber, type NormalisedNumber } from '../../../core/phone.js'
import {
  type SipInviteValues,
  type SipTrunkAdmissionDeps,
  type SipTrunkRefusal,
  sipTrunkAdmission,
} from '../../../gateway/admission/sip-trunk-admission.js'
import { DigestServer } from '../calls/digest-auth.js'
import type { SipAdmission, SipAdmissionDecision, SipRefusal, SipSource } from '../calls/sip-admission.js'
import { getHeader, type SipRequest } from '../message/sip-message.js'
import { parseNameAddr, parseUri, unescapeUser } from '../message/sip-uri-codec.js'
import { sipRefusal } from './sip-refusals.js'
import { inviteDigest } from './trunk-digest.js'

/** What the admission reads and opens sessions with. */
export interface SipAdmissionDeps extends SipTrunkAdmissionDeps {
  /** The digest realm (SIP_PUBLIC_HOST). */
  readonly realm: string
}

/** The store-backed admission the gateway wires into its SIP endpoint. */
export function storeSipAdmission(deps: SipAdmissionDeps): SipAdmission {
  // Nonces are checked by the replica that issued them (the retried INVITE comes back to the same address).
  const digest = new DigestServer({ realm: deps.realm, secret: randomBytes(32) })
  const admit = sipTrunkAdmission(deps)
  return (source, invite) => {
    const decided = admit(
      inviteValues(source, invite),
      inviteDigest(digest, { method: invite.method, uri: invite.uri, source: source.address }),
    )
    return decided instanceof Promise ? decided.then(onWire) : onWire(decided)
  }
}

/** The admission's answer as the endpoint speaks it. */
function onWire(decided: Awaited<ReturnType<ReturnType<typeof sipTrunkAdmission>>>): SipAdmissionDecision {
  if (!decided.admit) return refusalOnWire(decided)
  return {
    admit: true,
    mediaEncryption: decided.mediaEncryption,
    open: async (transport) => {
      const opened = await decided.open(transport)
      return opened.admit ? opened : refusalOnWire(opened)
    },
  }
}

function refusalOnWire(refused: SipTrunkRefusal): SipRefusal {
  return sipRefusal(
    refused.refusal,
    (refused.challenges ?? []).map((value) => ({ name: 'WWW-Authenticate', value })),
  )
}

/** What the gateway's admission reads of an INVITE. */
function inviteValues(source: SipSource, invite: SipRequest): SipInviteValues {
  return {
    source: source.address,
    callId: getHeader(invite, 'Call-ID'),
    authorization: getHeader(invite, 'Authorization'),
    dialled: dialledNumber(invite),
    caller: callerNumber(invite),
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
