/**
 * The test phone's SDES-keyed SRTP (RFC 4568 on RFC 3711), as a secure trunk's carrier offers it: one crypto line,
 * AES_CM_128_HMAC_SHA1_80 with tag 1 and a fresh key of ours; the gateway's answer must accept it (RTP/SAVP, one line
 * for tag 1, its own key). Then our RTP goes out protected and what arrives is authenticated and decrypted (a packet
 * that fails is dropped, as a phone drops it). The packet work is the transport's own SrtpSession: this is a load
 * generator and an interop fixture, not a second implementation to check the first (test/sip/srtp/ checks it with
 * RFC 3711's vectors, and baresip and linphone check it against theirs).
 */
import { randomBytes } from 'node:crypto'
import { parse } from 'sdp-transform'
import { encodeSdesCrypto, SDES_KEY_SALT_BYTES } from '../../transports/sip/media/srtp/sdes-crypto-codec.js'
import { readSrtpAnswer } from '../../transports/sip/media/srtp/sdes-negotiation.js'
import { SrtpSession } from '../../transports/sip/media/srtp/srtp-session.js'

/** One call's SRTP on the caller's side. */
export class CallerSrtp {
  readonly #keySalt = randomBytes(SDES_KEY_SALT_BYTES)
  #session: SrtpSession | undefined

  /** The `a=crypto` line of our offer. */
  get offerLine(): string {
    const c = encodeSdesCrypto({ tag: 1, suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: this.#keySalt })
    return `a=crypto:${c.id} ${c.suite} ${c.config}`
  }

  /** Reads the gateway's SDP answer; throws unless it accepted our crypto line. */
  answer(sdp: string): void {
    const media = parse(sdp).media?.[0]
    if (media === undefined) throw new Error('the answer has no m= line')
    const read = readSrtpAnswer(media, { encryption: 'required', tls: true, keySalt: this.#keySalt })
    if (!read.ok) throw new Error(`SRTP answer refused: ${read.reason}`)
    if (read.keys === undefined) throw new Error('the answer has no SRTP keys')
    this.#session = new SrtpSession(read.keys)
  }

  /** Our RTP packet as SRTP (nothing is sent before the answer, which keys the session). */
  protect(rtp: Buffer): Buffer {
    if (this.#session === undefined) throw new Error('SRTP before the answer')
    return this.#session.protectRtp(rtp)
  }

  /** The gateway's SRTP packet as RTP; undefined when it did not authenticate, was replayed, or came before the answer. */
  unprotect(packet: Buffer): Buffer | undefined {
    const plain = this.#session?.unprotectRtp(packet)
    return plain instanceof Buffer ? plain : undefined
  }
}
