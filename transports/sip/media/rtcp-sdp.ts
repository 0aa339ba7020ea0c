/**
 * The RTCP side of SDP offer/answer, kept beside `sdp-offer-answer.ts` rather than inside it: where the peer
 * wants RTCP (`a=rtcp`, RFC 3605: a port and optionally an address) and whether it offered to multiplex RTCP
 * on the RTP port (`a=rtcp-mux`, RFC 5761 section 5.1.1), which we accept by echoing the attribute in the answer.
 */
import { type MediaDescription, parse, type SessionDescription, write } from 'sdp-transform'
import type { RtcpTarget } from './rtcp-session.js'
import { type AnswerResult, answerOffer, type LocalMedia, type NegotiatedAudio } from './sdp-offer-answer.js'

/** An answer, as `answerOffer` gives it, with where the peer's RTCP goes. */
export type RtcpAnswerResult = (AnswerResult & { ok: false }) | (AnswerResult & { ok: true; readonly rtcp?: RtcpTarget | undefined })

/** Answers an offer like `answerOffer`, accepting `a=rtcp-mux` when the offer's audio stream has it. */
export function answerWithRtcp(offerSdp: string, local: LocalMedia): RtcpAnswerResult {
  const answered = answerOffer(offerSdp, local)
  if (!answered.ok) return answered
  const offered = audioOf(parseOrNull(offerSdp), answered.audio.remotePort)
  const rtcp = rtcpTarget(offered, answered.audio)
  return { ...answered, answer: rtcp.mux ? withRtcpMux(answered.answer) : answered.answer, rtcp }
}

/** Where the peer's RTCP goes, read from its audio stream's description (offer or answer). */
export function rtcpTarget(media: MediaDescription | undefined, audio: Pick<NegotiatedAudio, 'remoteAddress' | 'remotePort'>): RtcpTarget {
  const port = media?.rtcp?.port
  const address = media?.rtcp?.address
  return {
    address: address !== undefined && address !== '' ? address : audio.remoteAddress,
    rtpPort: audio.remotePort,
    rtcpPort: port !== undefined && port > 0 && port < 65536 ? port : undefined,
    mux: media?.rtcpMux !== undefined,
  }
}

/** The audio description whose port is the negotiated one (the stream `answerOffer` picked). */
function audioOf(sdp: SessionDescription | null, port: number): MediaDescription | undefined {
  return sdp?.media.find((m) => m.type === 'audio' && m.port === port)
}

/** Adds `a=rtcp-mux` to the accepted audio stream of our answer. */
function withRtcpMux(answerSdp: string): string {
  const sdp = parseOrNull(answerSdp)
  if (sdp === null) return answerSdp
  sdp.media = sdp.media.map((m) => (m.type === 'audio' && m.port > 0 ? { ...m, rtcpMux: 'rtcp-mux' } : m))
  return write(sdp)
}

/** sdp-transform does not throw on what it was fuzzed with; should a future version, there is no RTCP info. */
function parseOrNull(text: string): SessionDescription | null {
  try {
    return parse(text)
  } catch {
    return null
  }
}
