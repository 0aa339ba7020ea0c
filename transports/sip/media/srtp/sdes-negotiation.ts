/**
 * SDES offer/answer for the audio stream (RFC 4568 section 7, RTP/SAVP of RFC 3711 section 3.1 with SDP), by the
 * trunk's `media_encryption` and the call's signalling:
 *
 * - An RTP/SAVP offer is accepted only when the trunk allows SRTP (`optional` or `required`) and the INVITE came
 *   over TLS: keys in clear-text signalling protect nothing, whoever sees the SIP sees the keys. It is answered
 *   RTP/SAVP with the first crypto line of the offer we support (the offerer's order) and one crypto line of ours,
 *   same tag and suite, with our own fresh key. Otherwise 488.
 * - An RTP/AVP offer is answered plain unless the trunk requires SRTP (488).
 * - Our offers (outbound calls, and an INVITE without SDP) are RTP/SAVP with one AES_CM_128_HMAC_SHA1_80 line when
 *   SRTP is allowed over TLS; an answer must then accept it (RTP/SAVP, our tag and suite, its own key).
 */
import type { MediaDescription } from 'sdp-transform'
import { decodeSdesCrypto, encodeSdesCrypto, type SdesCrypto } from './sdes-crypto-codec.js'
import type { SrtpSuite } from './srtp-context.js'

/** A trunk's `media_encryption`. */
export type MediaEncryption = 'none' | 'optional' | 'required'

/** The trunk settings as stored and as the API speaks them. */
export const MEDIA_ENCRYPTIONS: readonly MediaEncryption[] = ['none', 'optional', 'required']

/** Our side's SRTP for one call: what the trunk allows, whether the signalling is TLS, and our master key and salt. */
export interface LocalSrtp {
  readonly encryption: MediaEncryption
  /** The call's signalling is TLS. */
  readonly tls: boolean
  /** Our 30-octet master key and salt for this call (sent in our SDP, never logged). */
  readonly keySalt: Buffer
}

/** The SRTP both sides agreed on: the suite and each direction's master key and salt. */
export interface SrtpKeys {
  readonly suite: SrtpSuite
  readonly tag: number
  /** Ours: what we protect with. */
  readonly local: Buffer
  /** The peer's: what we unprotect with. */
  readonly remote: Buffer
}

/** The SRTP part of an answer, or why the offer is refused. */
export type SrtpAnswer =
  | { readonly ok: true; readonly keys: SrtpKeys | undefined }
  | { readonly ok: false; readonly reason: string; readonly warning: string }

/** The tag and suite of our offers (mandatory to implement, RFC 4568 section 6.2). */
const OFFER_TAG = 1
const OFFER_SUITE: SrtpSuite = 'AES_CM_128_HMAC_SHA1_80'

/** The transport protocol of an m= line, upper case. */
function protocolOf(media: Pick<MediaDescription, 'protocol'>): string {
  return media.protocol.toUpperCase()
}

/** True for the profiles this endpoint reads: RTP/AVP and RTP/SAVP. */
export function isRtpProfile(media: Pick<MediaDescription, 'protocol'>): boolean {
  const p = protocolOf(media)
  return p === 'RTP/AVP' || p === 'RTP/SAVP'
}

/** Decides on an offered stream's SRTP (`local` undefined: SRTP is off, as `none`). */
export function answerSrtp(media: Pick<MediaDescription, 'protocol' | 'crypto'>, local: LocalSrtp | undefined): SrtpAnswer {
  const encryption = local?.encryption ?? 'none'
  if (protocolOf(media) !== 'RTP/SAVP') {
    if (encryption === 'required') return refuse('this trunk requires SRTP (RTP/SAVP)', 'SRTP required')
    return { ok: true, keys: undefined }
  }
  if (local === undefined || encryption === 'none') return refuse('SRTP is not enabled on this trunk', 'SRTP not enabled')
  if (!local.tls) return refuse('SRTP needs TLS signalling (the keys travel in the SDP)', 'SRTP only over TLS')
  let chosen: SdesCrypto | null = null
  for (const line of media.crypto ?? []) {
    chosen = decodeSdesCrypto(line)
    if (chosen !== null) break
  }
  if (chosen === null) return refuse('no supported crypto line: AES_CM_128_HMAC_SHA1_80 or _32', 'no supported SRTP crypto suite')
  return { ok: true, keys: { suite: chosen.suite, tag: chosen.tag, local: local.keySalt, remote: chosen.keySalt } }
}

/** Our answer's m= line with its SRTP: RTP/SAVP and our one crypto line (unchanged without keys). */
export function secureMedia(media: MediaDescription, keys: SrtpKeys | undefined): MediaDescription {
  if (keys === undefined) return media
  return { ...media, protocol: 'RTP/SAVP', crypto: [encodeSdesCrypto({ tag: keys.tag, suite: keys.suite, keySalt: keys.local })] }
}

/** True when our offer is RTP/SAVP: the trunk allows SRTP and the signalling is TLS. */
export function offersSrtp(local: LocalSrtp | undefined): local is LocalSrtp {
  return local !== undefined && local.encryption !== 'none' && local.tls
}

/** Our offer's m= line with its SRTP, when we offer it. */
export function secureOffer(media: MediaDescription, local: LocalSrtp | undefined): MediaDescription {
  if (!offersSrtp(local)) return media
  return { ...media, protocol: 'RTP/SAVP', crypto: [encodeSdesCrypto({ tag: OFFER_TAG, suite: OFFER_SUITE, keySalt: local.keySalt })] }
}

/** Reads the SRTP of the answer to our offer: it must mirror what we offered. */
export function readSrtpAnswer(
  media: Pick<MediaDescription, 'protocol' | 'crypto'>,
  local: LocalSrtp | undefined,
): { ok: true; keys: SrtpKeys | undefined } | { ok: false; reason: string } {
  const secure = protocolOf(media) === 'RTP/SAVP'
  if (!offersSrtp(local))
    return secure ? { ok: false, reason: 'the answer is RTP/SAVP to a plain RTP offer' } : { ok: true, keys: undefined }
  if (!secure) return { ok: false, reason: 'the answer refused SRTP (RTP/AVP to an RTP/SAVP offer)' }
  const lines = media.crypto ?? []
  const accepted = lines.length === 1 ? decodeSdesCrypto(lines[0]!) : null
  if (accepted === null || accepted.tag !== OFFER_TAG || accepted.suite !== OFFER_SUITE) {
    return { ok: false, reason: 'the answer has no crypto line matching our offer' }
  }
  return { ok: true, keys: { suite: accepted.suite, tag: accepted.tag, local: local.keySalt, remote: accepted.keySalt } }
}

function refuse(reason: string, warning: string): SrtpAnswer {
  return { ok: false, reason, warning: `399 voxgate "${warning}"` }
}
