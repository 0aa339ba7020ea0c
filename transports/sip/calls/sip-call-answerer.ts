/**
 * Turns an admitted INVITE into a connected call: the SDP offer is checked before anything is allocated (none,
 * or nothing usable: 488), an RTP port is taken from the pool (none free: 503), the session is opened over the
 * call's transport (refused: the admission's status), and only then the 200 with our SDP answer goes out. A
 * CANCEL at any point before the 200 wins: whatever was allocated is freed, and a session opened meanwhile ends
 * at once as a caller hang-up. A connected call whose peer falls silent (no RTP or RTCP for the media timeout,
 * while it is not holding the call) is hung up with a BYE and ends `media_timeout`.
 */
import { randomBytes, randomInt } from 'node:crypto'
import { CallSessionTimer } from './call-session-timer.js'
import type { SipAdmittedCall, SipSource } from './sip-admission.js'
import type { RtpPortPool } from '../media/rtp-port-pool.js'
import { RtpMedia } from '../media/rtp-media.js'
import { answerWithRtcp, type RtcpAnswerResult } from '../media/rtcp-sdp.js'
import { type AnswerResult, answerOffer, createOffer, type LocalMedia, TELEPHONE_EVENT_PAYLOAD } from '../media/sdp-offer-answer.js'
import type { SipCall } from './sip-call.js'
import { SipCallTransport } from './sip-call-transport.js'
import { allowedMethods, getHeader, getHeaderValues } from '../message/sip-message.js'
import { sessionBody } from '../message/sdp-body.js'
import type { LocalSrtp } from '../media/srtp/sdes-negotiation.js'
import { SDES_KEY_SALT_BYTES } from '../media/srtp/sdes-crypto-codec.js'

/** The bodies an INVITE may carry, as a 415 says: SDP, alone or as a part of a multipart. */
const ACCEPTED_BODIES = 'application/sdp, multipart/mixed, multipart/related, multipart/alternative'

/** Seconds a caller refused for want of an RTP port is asked to wait. */
const NO_PORT_RETRY_AFTER_S = 5

/** What the answerer needs. */
export interface SipCallAnswererOptions {
  readonly rtpPorts: RtpPortPool
  /** The address in our SDP (SIP_PUBLIC_HOST). */
  readonly publicHost: string
  /** Told when opening the session threw (the INVITE got 500), or a media callback did (the call goes on). */
  readonly onError?: (error: unknown) => void
  /** Told when a call is connected: the endpoint finds it by its dialog from now on. */
  readonly onConnected: (call: SipCall) => void
  /** No RTP or RTCP from a peer for this long ends its call (`SIP_MEDIA_TIMEOUT_S`); 0 or unset: never. */
  readonly mediaTimeoutMs?: number
  /** Told when a call was hung up for its media timeout (metrics, one log line). */
  readonly onMediaTimeout?: (call: SipCall) => void
  /** Offer and accept comfort noise (`SIP_COMFORT_NOISE`). */
  readonly comfortNoise?: boolean
}

/** Connects admitted calls. */
export class SipCallAnswerer {
  readonly #o: SipCallAnswererOptions

  constructor(options: SipCallAnswererOptions) {
    this.#o = options
  }

  /** Runs the steps; the call ends up answered 200, refused, or cancelled. Never throws. */
  async connect(
    call: SipCall,
    admitted: SipAdmittedCall,
    source: SipSource,
    invite: { body: Buffer; headers: readonly { name: string; value: string }[] },
  ): Promise<void> {
    const found = sessionBody(getHeader(invite, 'Content-Type'), invite.body)
    if (found.kind === 'unsupported') return call.refuse(415, 'Unsupported Media Type', [{ name: 'Accept', value: ACCEPTED_BODIES }])
    if (found.kind === 'malformed') return call.refuse(400, 'Bad Request', [{ name: 'Warning', value: warning(found.reason) }])
    // Our answer is SDP: a caller that accepts no SDP cannot take it (RFC 3261 section 21.4.7; RFC 4475 section 3.3.15).
    if (!acceptsSdp(invite))
      return call.refuse(406, 'Not Acceptable', [{ name: 'Warning', value: warning('our answer is application/sdp') }])
    // No offer (RFC 3264 section 4 with RFC 3261 section 13.2.1), or a multipart without an SDP part: ours goes in
    // the 200, the answer comes in the ACK.
    const late = found.kind === 'none'
    const offer = found.kind === 'sdp' ? found.sdp : ''
    // Our SRTP key for the call, fresh each time (RFC 4568 section 6.1); used only if the stream is RTP/SAVP.
    const srtp: LocalSrtp = {
      encryption: admitted.mediaEncryption ?? 'none',
      tls: source.transport === 'tls',
      keySalt: randomBytes(SDES_KEY_SALT_BYTES),
    }
    // A trunk that requires SRTP takes no call over UDP or TCP: its keys would travel in the clear.
    if (srtp.encryption === 'required' && !srtp.tls) {
      return call.refuse(488, 'this trunk requires SRTP, which needs TLS signalling', [
        { name: 'Warning', value: '399 voxgate "SRTP only over TLS"' },
      ])
    }
    if (!late) {
      const probe = answerOffer(offer, { address: this.#o.publicHost, port: 9, sessionId: '0', sessionVersion: 1, srtp })
      if (!probe.ok) return call.refuse(488, probe.reason, [{ name: 'Warning', value: probe.warning }])
    }

    const timer = CallSessionTimer.negotiate(invite)
    if (!timer.ok) return call.refuse(timer.status, timer.reason, timer.headers)

    const lease = await this.#o.rtpPorts.acquire()
    if (lease === null) return call.refuse(503, 'no RTP port free', [{ name: 'Retry-After', value: String(NO_PORT_RETRY_AFTER_S) }])
    if (call.state !== 'ringing') return lease.release()
    const local: LocalMedia = {
      address: this.#o.publicHost,
      port: lease.port,
      sessionId: String(randomInt(1, 2 ** 47)),
      sessionVersion: 1,
      srtp,
      comfortNoise: this.#o.comfortNoise === true,
    }
    const answered: RtcpAnswerResult = late ? { ...lateOffer(local, source.address), rtcp: undefined } : answerWithRtcp(offer, local)
    if (!answered.ok) {
      lease.release()
      return call.refuse(488, answered.reason, [{ name: 'Warning', value: answered.warning }])
    }
    let transport: SipCallTransport | undefined
    const media = new RtpMedia(
      lease,
      answered.audio,
      source.address,
      {
        onAudio: (frame, atMs) => transport?.callerAudio(frame, atMs),
        onDigit: (digit) => transport?.callerDigit(digit),
        onError: (e) => this.#o.onError?.(e),
        onMediaTimeout: () => {
          this.#o.onMediaTimeout?.(call)
          transport?.peerEnded('media_timeout')
          call.hangUp('media_timeout')
        },
      },
      { target: answered.rtcp, mediaTimeoutMs: this.#o.mediaTimeoutMs ?? 0 },
    )
    transport = new SipCallTransport(
      media,
      answered.audio.codec,
      {
        onSessionEnded: (reason) => call.hangUp(reason),
        refer: call.peerAcceptsRefer ? (target, signal) => call.refer(target, signal) : undefined,
      },
      allowedMethods(invite),
    )

    let opened: Awaited<ReturnType<SipAdmittedCall['open']>>
    try {
      opened = await admitted.open(transport)
    } catch (e) {
      media.close()
      this.#o.onError?.(e)
      return call.refuse(500, 'Server Internal Error')
    }
    if (!opened.admit) {
      media.close()
      return call.refuse(opened.status, opened.reason, opened.headers)
    }
    transport.attach(opened.session)
    if (call.state !== 'ringing') {
      // Cancelled while the session opened: it ends at once, and no 200 goes out.
      media.close()
      void opened.session.end('caller_hangup')
      return
    }
    call.answer(media, transport, local, answered.answer, late)
    this.#o.onConnected(call)
  }
}

/**
 * Our offer for an INVITE that had none: PCMU only, so the pipeline's mu-law needs no codec switch once the
 * answer comes, plus telephone-event. Until the ACK's answer the media waits (not started), assuming what the
 * answer must say: PCMU, our telephone-event payload type, the signalling peer's address.
 */
function lateOffer(local: LocalMedia, peer: string): AnswerResult & { ok: true } {
  const codecs = ['PCMU'] as const
  return {
    ok: true,
    answer: createOffer({ ...local, codecs }),
    audio: {
      codec: 'PCMU',
      payloadType: 0,
      telephoneEventPayloadType: TELEPHONE_EVENT_PAYLOAD,
      remoteAddress: peer,
      remotePort: 9,
      remoteDirection: 'sendrecv',
      held: false,
    },
  }
}

/** True unless an Accept header lists no type that covers application/sdp (an empty one accepts nothing). */
function acceptsSdp(invite: { headers: readonly { name: string; value: string }[] }): boolean {
  const accepted = getHeaderValues(invite, 'Accept')
  if (accepted === null || !invite.headers.some((h) => h.name === 'Accept')) return true
  return accepted.some((range) => /^(?:application\/sdp|application\/\*|\*\/\*)\s*(?:;|$)/i.test(range.trim()))
}

/** A Warning header value (RFC 3261 section 20.43) with our agent name and the reason quoted. */
function warning(reason: string): string {
  return `399 voxgate ${JSON.stringify(reason.replace(/["\\]/g, "'").slice(0, 100))}`
}
