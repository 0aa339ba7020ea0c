/**
 * SDP offer/answer for one audio stream (RFC 3264 on RFC 4566 SDP, parsed and written with `sdp-transform`):
 * G.711 (PCMU or PCMA, 8 kHz) plus RFC 4733 telephone-event and RFC 3389 comfort noise, 20 ms packets. Answers an inbound offer (the
 * initial INVITE or a re-INVITE, whose direction says hold or unhold), builds our offer for outbound calls and
 * reads the answer to it. Pure: no sockets, the caller passes our address and RTP port.
 */
import { type MediaDescription, parse, type SessionDescription, write } from 'sdp-transform'
import {
  answerSrtp,
  isRtpProfile,
  type LocalSrtp,
  readSrtpAnswer,
  type SrtpKeys,
  secureMedia,
  secureOffer,
} from './srtp/sdes-negotiation.js'

/** The audio codecs we speak, in our order of preference. */
export type G711Codec = 'PCMU' | 'PCMA'

/** RFC 3551 static payload types. */
const STATIC_PAYLOADS: Readonly<Record<number, G711Codec>> = { 0: 'PCMU', 8: 'PCMA' }

/** The dynamic payload type we offer for telephone-event (the common choice; any 96-127 is valid). */
export const TELEPHONE_EVENT_PAYLOAD = 101

/** RFC 3551's static payload type for comfort noise (CN/8000, RFC 3389). */
export const COMFORT_NOISE_PAYLOAD = 13

/** Packet duration we send and ask for, in milliseconds. */
export const PTIME_MS = 20

/** An SDP media direction (RFC 3264 section 5.1). */
export type MediaDirection = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive'

/** Our side of the session: where we receive RTP, and the o= line's identity. */
export interface LocalMedia {
  /** The address put in c= and o= (SIP_PUBLIC_HOST). */
  readonly address: string
  readonly port: number
  /** o= session id, fixed for the call. */
  readonly sessionId: string
  /** o= version: the caller increments it whenever our SDP changes (RFC 3264 section 8). */
  readonly sessionVersion: number
  /** Codec preference when we choose; defaults to PCMU then PCMA. */
  readonly codecs?: readonly G711Codec[]
  /** SRTP as the trunk and the signalling allow it (srtp/sdes-negotiation.ts); absent: plain RTP only. */
  readonly srtp?: LocalSrtp | undefined
  /** Offer and accept comfort noise (CN/8000): silence toward a peer that takes it is then suppressed. */
  readonly comfortNoise?: boolean | undefined
}

/** What both sides agreed on for the audio stream. */
export interface NegotiatedAudio {
  readonly codec: G711Codec
  readonly payloadType: number
  /** The peer's telephone-event payload type; `undefined` when it offered none (DTMF then only in-band). */
  readonly telephoneEventPayloadType?: number | undefined
  /** The comfort-noise payload type both sides took (RFC 3389); `undefined`: steady G.711 silence in pauses. */
  readonly comfortNoisePayloadType?: number | undefined
  /** Where the peer wants RTP; `0.0.0.0` while on hold RFC 2543-style. */
  readonly remoteAddress: string
  readonly remotePort: number
  /** The peer's ptime, if it gave one (we still send 20 ms). */
  readonly remotePtime?: number | undefined
  /** The direction the peer declared for this stream. */
  readonly remoteDirection: MediaDirection
  /** The peer put the call on hold: sendonly, inactive or c=0.0.0.0 (RFC 3264 section 8.4). */
  readonly held: boolean
  /** SRTP's suite and keys when the stream is RTP/SAVP; never logged. */
  readonly srtp?: SrtpKeys | undefined
}

/** An answer to send (200 OK body), or why the offer is refused. */
export type AnswerResult =
  | { readonly ok: true; readonly audio: NegotiatedAudio; readonly answer: string }
  | { readonly ok: false; readonly status: 488; readonly reason: string; readonly warning: string }

/** What a remote audio stream offers or answers. */
interface RemoteAudio {
  readonly index: number
  readonly media: MediaDescription
  readonly address: string
  readonly payloads: number[]
  readonly direction: MediaDirection
}

const DIRECTIONS = new Set<string>(['sendrecv', 'sendonly', 'recvonly', 'inactive'])

/** The direction we answer with: the mirror image of the offer's (RFC 3264 section 6.1). */
const MIRROR: Readonly<Record<MediaDirection, MediaDirection>> = {
  sendrecv: 'sendrecv',
  sendonly: 'recvonly',
  recvonly: 'sendonly',
  inactive: 'inactive',
}

/** Answers an offer: picks a codec, keeps every m= line in order (others refused with port 0), adds our address. */
export function answerOffer(offerSdp: string, local: LocalMedia): AnswerResult {
  const offer = parseSdp(offerSdp)
  if (offer === null || offer.media.length === 0 || offer.version !== 0)
    return refuse('no media description', '304 voxgate "Media type not available"')
  const audio = findAudio(offer)
  if (audio === null) return refuse('no RTP/AVP audio stream', '304 voxgate "Media type not available"')
  const security = answerSrtp(audio.media, local.srtp)
  if (!security.ok) return refuse(security.reason, security.warning)
  const chosen = chooseCodec(audio, local.codecs ?? ['PCMU', 'PCMA'])
  if (chosen === null) return refuse('no common codec: PCMU or PCMA required', '305 voxgate "Incompatible media format"')
  const extra = extraPayloads(audio, local.comfortNoise)

  const direction = MIRROR[audio.direction]
  const media = offer.media.map((m, i) =>
    i === audio.index ? secureMedia(audioMedia(local.port, chosen, extra, direction), security.keys) : rejectedMedia(m),
  )
  const answer = write(session(local, media))
  const negotiated = withSrtp(negotiatedAudio(audio, chosen, extra), security.keys)
  return { ok: true, audio: negotiated, answer }
}

/**
 * Our offer for an outbound call: PCMU, PCMA, telephone-event (and CN with `local.comfortNoise`), ptime 20, sendrecv
 * (or `direction` to hold).
 */
export function createOffer(local: LocalMedia, direction: MediaDirection = 'sendrecv'): string {
  const codecs = local.codecs ?? ['PCMU', 'PCMA']
  const cn = local.comfortNoise === true ? [COMFORT_NOISE_PAYLOAD] : []
  const payloads = [...codecs.map((c) => (c === 'PCMU' ? 0 : 8)), TELEPHONE_EVENT_PAYLOAD, ...cn]
  const media: MediaDescription = {
    type: 'audio',
    port: local.port,
    protocol: 'RTP/AVP',
    payloads: payloads.join(' '),
    rtp: [
      ...codecs.map((c) => ({ payload: c === 'PCMU' ? 0 : 8, codec: c, rate: 8000 })),
      { payload: TELEPHONE_EVENT_PAYLOAD, codec: 'telephone-event', rate: 8000 },
      ...cn.map((payload) => ({ payload, codec: 'CN', rate: 8000 })),
    ],
    fmtp: [{ payload: TELEPHONE_EVENT_PAYLOAD, config: '0-16' }],
    ptime: PTIME_MS,
    direction,
  }
  return write(session(local, [secureOffer(media, local.srtp)]))
}

/**
 * Reads the answer to our offer (`local`: what the offer held of SRTP and comfort noise); `null` with a reason when it
 * accepts no codec we offered or no audio.
 */
export function readAnswer(
  answerSdp: string,
  offered: readonly G711Codec[] = ['PCMU', 'PCMA'],
  local?: Pick<LocalMedia, 'srtp' | 'comfortNoise'>,
): { ok: true; audio: NegotiatedAudio } | { ok: false; reason: string } {
  const answer = parseSdp(answerSdp)
  const audio = answer === null ? null : findAudio(answer)
  if (audio === null) return { ok: false, reason: 'the answer has no RTP/AVP audio stream' }
  const chosen = chooseCodec(audio, offered)
  if (chosen === null) return { ok: false, reason: 'the answer accepts none of the offered codecs' }
  const security = readSrtpAnswer(audio.media, local?.srtp)
  if (!security.ok) return security
  return { ok: true, audio: withSrtp(negotiatedAudio(audio, chosen, extraPayloads(audio, local?.comfortNoise)), security.keys) }
}

/** What was agreed for the remote audio stream, offered or answered. */
function negotiatedAudio(audio: RemoteAudio, chosen: { codec: G711Codec; payloadType: number }, extra: ExtraPayloads): NegotiatedAudio {
  return {
    codec: chosen.codec,
    payloadType: chosen.payloadType,
    telephoneEventPayloadType: extra.telephoneEvent,
    comfortNoisePayloadType: extra.comfortNoise,
    remoteAddress: audio.address,
    remotePort: audio.media.port,
    remotePtime: audio.media.ptime,
    remoteDirection: audio.direction,
    held: audio.direction === 'sendonly' || audio.direction === 'inactive' || isNullAddress(audio.address),
  }
}

/** The stream's SRTP keys, when it is RTP/SAVP (a plain stream has no `srtp` at all). */
function withSrtp(audio: NegotiatedAudio, keys: SrtpKeys | undefined): NegotiatedAudio {
  return keys === undefined ? audio : { ...audio, srtp: keys }
}

/** sdp-transform does not throw on the inputs we fuzzed; a throw from a future version still only refuses the offer. */
function parseSdp(text: string): SessionDescription | null {
  try {
    return parse(text)
  } catch {
    return null
  }
}

function refuse(reason: string, warning: string): AnswerResult {
  return { ok: false, status: 488, reason, warning }
}

/** The first audio m= line on RTP/AVP or RTP/SAVP with a port and an address (media-level c= wins over session-level). */
function findAudio(sdp: SessionDescription): RemoteAudio | null {
  for (const [index, media] of sdp.media.entries()) {
    if (media.type !== 'audio' || !isRtpProfile(media) || !(media.port > 0 && media.port < 65536)) continue
    const connection = media.connection?.ip ?? sdp.connection?.ip
    if (connection === undefined) continue
    const address = connectionHost(connection)
    const payloads = String(media.payloads ?? '')
      .split(' ')
      .filter((p) => /^[0-9]{1,3}$/.test(p))
      .map(Number)
    const declared = media.direction ?? sdp.direction
    const direction = declared !== undefined && DIRECTIONS.has(declared) ? (declared as MediaDirection) : 'sendrecv'
    return { index, media, address, payloads, direction }
  }
  return null
}

/**
 * Picks the G.711 codec in the order the remote side lists them: the offerer's preference when answering (RFC 3264
 * section 6.1), the answerer's choice when reading an answer. Dynamic payload types count when their rtpmap
 * names PCMU/PCMA at 8000 Hz.
 */
function chooseCodec(audio: RemoteAudio, ours: readonly G711Codec[]): { codec: G711Codec; payloadType: number } | null {
  for (const pt of audio.payloads) {
    const rtpmap = audio.media.rtp.find((r) => r.payload === pt)
    const codec = rtpmap === undefined ? STATIC_PAYLOADS[pt] : rtpmapCodec(rtpmap.codec, rtpmap.rate)
    if (codec !== undefined && ours.includes(codec)) return { codec, payloadType: pt }
  }
  return null
}

function rtpmapCodec(name: string, rate: number | undefined): G711Codec | undefined {
  const upper = name.toUpperCase()
  return (upper === 'PCMU' || upper === 'PCMA') && (rate === undefined || rate === 8000) ? upper : undefined
}

/** The payload types beside the codec that both sides took: telephone-event and comfort noise. */
interface ExtraPayloads {
  readonly telephoneEvent: number | undefined
  readonly comfortNoise: number | undefined
}

/** The remote stream's telephone-event payload type, and its comfort-noise one when we take CN (`comfortNoise`). */
function extraPayloads(audio: RemoteAudio, comfortNoise: boolean | undefined): ExtraPayloads {
  return { telephoneEvent: telephoneEventPayload(audio), comfortNoise: comfortNoise === true ? comfortNoisePayload(audio) : undefined }
}

/** The listed CN payload type: one whose rtpmap names CN at 8000 Hz, or the static 13 without an rtpmap. */
function comfortNoisePayload(audio: RemoteAudio): number | undefined {
  return audio.payloads.find((pt) => {
    const rtpmap = audio.media.rtp.find((r) => r.payload === pt)
    return rtpmap === undefined ? pt === COMFORT_NOISE_PAYLOAD : rtpmap.codec.toUpperCase() === 'CN' && (rtpmap.rate ?? 8000) === 8000
  })
}

function telephoneEventPayload(audio: RemoteAudio): number | undefined {
  const listed = new Set(audio.payloads)
  return audio.media.rtp.find((r) => r.codec.toLowerCase() === 'telephone-event' && (r.rate ?? 8000) === 8000 && listed.has(r.payload))
    ?.payload
}

/**
 * The host of a c= connection-address: a multicast one carries `/ttl` (IP4) and `/count` after it (RFC 4566
 * section 5.7; the section 5 example has `c=IN IP4 224.2.17.12/127`), which are no part of where RTP goes.
 */
function connectionHost(connection: string): string {
  const slash = connection.indexOf('/')
  return slash === -1 ? connection : connection.slice(0, slash)
}

function isNullAddress(address: string): boolean {
  return address === '0.0.0.0' || address === '::'
}

function audioMedia(
  port: number,
  chosen: { codec: G711Codec; payloadType: number },
  extra: ExtraPayloads,
  direction: MediaDirection,
): MediaDescription {
  const payloads = [chosen.payloadType]
  const rtp: MediaDescription['rtp'] = [{ payload: chosen.payloadType, codec: chosen.codec, rate: 8000 }]
  const fmtp: MediaDescription['fmtp'] = []
  if (extra.telephoneEvent !== undefined) {
    payloads.push(extra.telephoneEvent)
    rtp.push({ payload: extra.telephoneEvent, codec: 'telephone-event', rate: 8000 })
    fmtp.push({ payload: extra.telephoneEvent, config: '0-16' })
  }
  if (extra.comfortNoise !== undefined) {
    payloads.push(extra.comfortNoise)
    rtp.push({ payload: extra.comfortNoise, codec: 'CN', rate: 8000 })
  }
  return { type: 'audio', port, protocol: 'RTP/AVP', payloads: payloads.join(' '), rtp, fmtp, ptime: PTIME_MS, direction }
}

/** RFC 3264 section 6: a refused stream is answered with port 0 and the offer's formats. */
function rejectedMedia(offered: MediaDescription): MediaDescription {
  return { type: offered.type, port: 0, protocol: offered.protocol, payloads: String(offered.payloads ?? '0'), rtp: [], fmtp: [] }
}

function session(local: LocalMedia, media: MediaDescription[]): SessionDescription {
  const ipVer = local.address.includes(':') ? 6 : 4
  return {
    version: 0,
    origin: {
      username: 'voxgate',
      sessionId: local.sessionId,
      sessionVersion: local.sessionVersion,
      netType: 'IN',
      ipVer,
      address: local.address,
    },
    name: 'voxgate',
    connection: { version: ipVer, ip: local.address },
    timing: { start: 0, stop: 0 },
    media,
  }
}
