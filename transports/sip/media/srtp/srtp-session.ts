/**
 * One call's SRTP in both directions: our key protects what we send, the peer's unprotects what it sends (RFC 4568
 * section 6.1: each side keys its own direction). Built from the negotiated {@link SrtpKeys}; a re-INVITE that
 * changes a key gets a new session (fresh ROC and replay state for that key, as RFC 4568 section 7.1.4 asks).
 */
import type { SrtpKeys } from './sdes-negotiation.js'
import { SrtpContext, type SrtpDrop } from './srtp-context.js'
import { SRTP_KEY_BYTES } from './srtp-key-derivation.js'

/** Both directions' SRTP contexts. */
export class SrtpSession {
  readonly #keys: SrtpKeys
  readonly #send: SrtpContext
  readonly #receive: SrtpContext

  constructor(keys: SrtpKeys) {
    this.#keys = keys
    this.#send = new SrtpContext(keys.suite, keys.local.subarray(0, SRTP_KEY_BYTES), keys.local.subarray(SRTP_KEY_BYTES))
    this.#receive = new SrtpContext(keys.suite, keys.remote.subarray(0, SRTP_KEY_BYTES), keys.remote.subarray(SRTP_KEY_BYTES))
  }

  /** True when `keys` are the ones this session runs with (a re-INVITE that kept them keeps the session). */
  uses(keys: SrtpKeys): boolean {
    const k = this.#keys
    return k.suite === keys.suite && k.local.equals(keys.local) && k.remote.equals(keys.remote)
  }

  /** Our RTP packet as SRTP. */
  protectRtp(packet: Buffer): Buffer {
    return this.#send.protectRtp(packet)
  }

  /** Octets SRTP adds to each of our RTP packets (the room {@link sealRtp} needs). */
  get rtpOverhead(): number {
    return this.#send.rtpOverhead
  }

  /** Our RTP packet, followed by {@link rtpOverhead} octets of room, made SRTP where it lies; returns `buffer`. */
  sealRtp(buffer: Buffer): Buffer {
    return this.#send.protectRtpInPlace(buffer)
  }

  /**
   * The peer's SRTP packet as RTP, or why it was dropped. The packet is decrypted where it is (a received datagram,
   * read by no one else): the result shares its octets.
   */
  unprotectRtp(packet: Buffer): Buffer | SrtpDrop {
    return this.#receive.unprotectRtp(packet, true)
  }

  /** Our RTCP compound packet as SRTCP. */
  protectRtcp(packet: Buffer): Buffer {
    return this.#send.protectRtcp(packet)
  }

  /** The peer's SRTCP packet as RTCP, or why it was dropped. */
  unprotectRtcp(packet: Buffer): Buffer | SrtpDrop {
    return this.#receive.unprotectRtcp(packet)
  }
}
