/**
 * SRTP and SRTCP (RFC 3711) for the two SDES suites of RFC 4568 section 6.2: AES_CM_128_HMAC_SHA1_80 and _32.
 * One context per master key, so per direction: ours protects what we send, the peer's unprotects what it sends.
 * RTP payloads are encrypted with AES-128 in counter mode under an IV of the session salt, the SSRC and the
 * 48-bit packet index (section 4.1.1), and authenticated with HMAC-SHA1 over the packet and the rollover counter
 * (section 4.2), truncated to 80 or 32 bits. The receiver estimates each packet's index from its sequence number
 * (section 3.3.1), refuses replays through a sliding window (section 3.3.2) and only then decrypts. SRTCP
 * (section 3.4) carries its own 31-bit index and the E flag after the payload, with an 80-bit tag in both suites.
 *
 * The hot path (50 packets a second per call each way) allocates only the keystream: the packet we send is
 * encrypted in the buffer it was encoded into, with room left for the tag, and a received one is decrypted in
 * place. Each session key keeps one AES-ECB cipher that makes the counter-mode keystream (srtp-aes-cm.ts) and one
 * HMAC-SHA1 with its pads hashed once (hmac-sha1.ts), since Node can neither give a cipher a new IV nor reset an
 * HMAC, and an object of each per packet cost more than the crypto in it. Tags are compared in constant time.
 * Failures are returned as a reason, not thrown: a peer controls them.
 */
import { HmacSha1 } from './hmac-sha1.js'
import { AesCmKeystream } from './srtp-aes-cm.js'
import { deriveSessionKeys } from './srtp-key-derivation.js'
import { SrtpReplayWindow } from './srtp-replay-window.js'

/** The crypto suites we speak, in our order of preference. */
export type SrtpSuite = 'AES_CM_128_HMAC_SHA1_80' | 'AES_CM_128_HMAC_SHA1_32'

/** Our preference when we choose or offer. */
export const SRTP_SUITES: readonly SrtpSuite[] = ['AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32']

/** Why a packet was dropped. */
export type SrtpDrop = 'invalid' | 'replayed' | 'unauthenticated'

/** SRTCP's tag: 80 bits in both suites (RFC 4568 section 6.2.2 for _32). */
const RTCP_TAG_BYTES = 10
/** The E flag and 31-bit SRTCP index word. */
const RTCP_INDEX_BYTES = 4
/** The RTCP header and sender SSRC, sent in the clear (RFC 3711 section 3.4). */
const RTCP_CLEAR_BYTES = 8
/**
 * RTP packets whose keystream is made in one cipher call (srtp-aes-cm.ts): a stream's indices run on by one, and
 * the call's fixed cost is most of a 20 ms packet's AES. 16 packets are a third of a second of one stream.
 */
const RTP_AHEAD = 16
/** SSRCs a context keeps receive state for: a peer that changes SSRC (a restart, a transfer) gets a fresh one. */
const MAX_STREAMS = 8

/** A packet's ROC, and a computed tag to compare with the packet's: shared by every context (all synchronous). */
const rocBytes = Buffer.alloc(4)
const computedTag = Buffer.alloc(20)

/** One direction's session keys, ready to use: the keystream's cipher, the salt and the HMAC. */
interface SessionCrypto {
  readonly cipher: AesCmKeystream
  readonly salt: Buffer
  readonly auth: HmacSha1
}

/** The rollover counter and highest sequence number of one SSRC, and its replay window. */
interface StreamState {
  roc: number
  /** s_l of section 3.3.1. */
  seq: number
  readonly window: SrtpReplayWindow
}

/** One master key's SRTP and SRTCP crypto, and the per-SSRC state of the streams it protects or receives. */
export class SrtpContext {
  readonly #tagBytes: number
  readonly #rtp: SessionCrypto
  readonly #rtcp: SessionCrypto
  readonly #streams = new Map<number, StreamState>()
  /** SRTCP's replay windows, per sender SSRC (SRTCP has its own index, no ROC). */
  readonly #rtcpWindows = new Map<number, SrtpReplayWindow>()
  #rtcpIndex = 0

  /** `masterKey` is 16 octets and `masterSalt` 14: the two parts of an SDES `inline:` key. */
  constructor(suite: SrtpSuite, masterKey: Uint8Array, masterSalt: Uint8Array) {
    this.#tagBytes = suite === 'AES_CM_128_HMAC_SHA1_32' ? 4 : 10
    const keys = deriveSessionKeys(masterKey, masterSalt)
    this.#rtp = { cipher: new AesCmKeystream(keys.rtp.key, RTP_AHEAD), salt: keys.rtp.salt, auth: new HmacSha1(keys.rtp.auth) }
    this.#rtcp = { cipher: new AesCmKeystream(keys.rtcp.key), salt: keys.rtcp.salt, auth: new HmacSha1(keys.rtcp.auth) }
  }

  /** Octets protection adds to an RTP packet. */
  get rtpOverhead(): number {
    return this.#tagBytes
  }

  /** An RTP packet as SRTP: the payload encrypted, the tag appended. The packet must be valid RTP (we wrote it). */
  protectRtp(packet: Buffer): Buffer {
    const out = Buffer.allocUnsafe(packet.length + this.#tagBytes)
    out.set(packet, 0)
    return this.protectRtpInPlace(out)
  }

  /**
   * {@link protectRtp} without a copy: `buffer` holds a valid RTP packet followed by {@link rtpOverhead} octets of
   * room; the payload is encrypted where it lies and the tag written into the room. Returns `buffer`.
   */
  protectRtpInPlace(buffer: Buffer): Buffer {
    const end = buffer.length - this.#tagBytes
    const headerBytes = rtpHeaderBytes(buffer, end)
    if (headerBytes < 0) throw new RangeError('not an RTP packet')
    const seq = buffer.readUInt16BE(2)
    const ssrc = buffer.readUInt32BE(8)
    let s = this.#streams.get(ssrc)
    if (s === undefined) s = keep(this.#streams, ssrc, { roc: 0, seq, window: new SrtpReplayWindow() })
    const roc = estimateRoc(s, seq)
    advance(s, roc, seq)
    this.#crypt(this.#rtp, ssrc, roc * 0x10000 + seq, buffer, headerBytes, end, buffer, headerBytes)
    rocBytes.writeUInt32BE(roc >>> 0, 0)
    this.#rtp.auth.tag(buffer, end, rocBytes, buffer, end, this.#tagBytes)
    return buffer
  }

  /**
   * An SRTP packet back to RTP, or why it was dropped (malformed, replayed, or its tag does not match). `inPlace`:
   * the payload is decrypted in `packet`'s own octets (a received datagram nobody else reads) and the result is a
   * view of them, with no copy; a dropped packet is left as it came.
   */
  unprotectRtp(packet: Buffer, inPlace = false): Buffer | SrtpDrop {
    const end = packet.length - this.#tagBytes
    const headerBytes = rtpHeaderBytes(packet, end)
    if (headerBytes < 0) return 'invalid'
    const seq = packet.readUInt16BE(2)
    const ssrc = packet.readUInt32BE(8)
    const known = this.#streams.get(ssrc)
    // An unknown SSRC starts at its first packet's sequence number and ROC 0 (section 3.3.1); its state is kept
    // only once a packet authenticates, so forged packets cannot evict a real stream.
    const s = known ?? { roc: 0, seq, window: new SrtpReplayWindow() }
    const roc = estimateRoc(s, seq)
    if (roc < 0) return 'replayed'
    const index = roc * 0x10000 + seq
    if (!s.window.accepts(index)) return 'replayed'
    rocBytes.writeUInt32BE(roc >>> 0, 0)
    this.#rtp.auth.tag(packet, end, rocBytes, computedTag, 0)
    if (!tagsEqual(computedTag, packet, end, this.#tagBytes)) return 'unauthenticated'
    let out: Buffer
    if (inPlace) {
      this.#crypt(this.#rtp, ssrc, index, packet, headerBytes, end, packet, headerBytes)
      out = packet.subarray(0, end)
    } else {
      out = Buffer.allocUnsafe(end)
      packet.copy(out, 0, 0, headerBytes)
      this.#crypt(this.#rtp, ssrc, index, packet, headerBytes, end, out, headerBytes)
    }
    if (known === undefined) keep(this.#streams, ssrc, s)
    advance(s, roc, seq)
    s.window.mark(index)
    return out
  }

  /** An RTCP compound packet as SRTCP: encrypted after the sender's SSRC, the E flag and index and the tag appended. */
  protectRtcp(packet: Buffer): Buffer {
    if (packet.length < RTCP_CLEAR_BYTES) throw new RangeError('not an RTCP packet')
    const index = this.#rtcpIndex
    this.#rtcpIndex = (this.#rtcpIndex + 1) & 0x7fffffff
    const ssrc = packet.readUInt32BE(4)
    const out = Buffer.allocUnsafe(packet.length + RTCP_INDEX_BYTES + RTCP_TAG_BYTES)
    packet.copy(out, 0, 0, RTCP_CLEAR_BYTES)
    this.#crypt(this.#rtcp, ssrc, index, packet, RTCP_CLEAR_BYTES, packet.length, out, RTCP_CLEAR_BYTES)
    out.writeUInt32BE((0x80000000 | index) >>> 0, packet.length)
    const authed = packet.length + RTCP_INDEX_BYTES
    this.#rtcp.auth.tag(out, authed, undefined, out, authed, RTCP_TAG_BYTES)
    return out
  }

  /** An SRTCP packet back to RTCP, or why it was dropped. */
  unprotectRtcp(packet: Buffer): Buffer | SrtpDrop {
    const authed = packet.length - RTCP_TAG_BYTES
    const end = authed - RTCP_INDEX_BYTES
    if (end < RTCP_CLEAR_BYTES || packet[0]! >> 6 !== 2) return 'invalid'
    const word = packet.readUInt32BE(end)
    const index = word & 0x7fffffff
    const ssrc = packet.readUInt32BE(4)
    const known = this.#rtcpWindows.get(ssrc)
    if (known !== undefined && !known.accepts(index)) return 'replayed'
    this.#rtcp.auth.tag(packet, authed, undefined, computedTag, 0)
    if (!tagsEqual(computedTag, packet, authed, RTCP_TAG_BYTES)) return 'unauthenticated'
    const out = Buffer.allocUnsafe(end)
    packet.copy(out, 0, 0, RTCP_CLEAR_BYTES)
    // E clear: the sender chose not to encrypt this one (section 3.4); it is still authenticated.
    if ((word & 0x80000000) !== 0) this.#crypt(this.#rtcp, ssrc, index, packet, RTCP_CLEAR_BYTES, end, out, RTCP_CLEAR_BYTES)
    else packet.copy(out, RTCP_CLEAR_BYTES, RTCP_CLEAR_BYTES, end)
    ;(known ?? keep(this.#rtcpWindows, ssrc, new SrtpReplayWindow())).mark(index)
    return out
  }

  /** `from..to` of `input` through AES-CM under the stream's IV, into `output` at `at`. */
  #crypt(keys: SessionCrypto, ssrc: number, index: number, input: Buffer, from: number, to: number, output: Buffer, at: number): void {
    if (to <= from) return
    keys.cipher.xor(keys.salt, ssrc, index, input, from, to, output, at)
  }
}

/**
 * Whether the first `n` octets of `computed` equal `packet[at..at + n)`, in time that does not depend on where they
 * differ (as `timingSafeEqual`, without two views and a native call a packet).
 */
function tagsEqual(computed: Uint8Array, packet: Uint8Array, at: number, n: number): boolean {
  let diff = 0
  for (let i = 0; i < n; i++) diff |= computed[i]! ^ packet[at + i]!
  return diff === 0
}

/** Adds an SSRC's state, forgetting the oldest beyond {@link MAX_STREAMS}. */
function keep<T>(map: Map<number, T>, ssrc: number, state: T): T {
  if (map.size >= MAX_STREAMS) map.delete(map.keys().next().value!)
  map.set(ssrc, state)
  return state
}

/** The fixed header, CSRCs and extension of the RTP packet in `packet[0..end)`; -1 when it is not one. */
function rtpHeaderBytes(packet: Buffer, end: number): number {
  if (end < 12 || packet[0]! >> 6 !== 2) return -1
  let n = 12 + 4 * (packet[0]! & 0x0f)
  if ((packet[0]! & 0x10) !== 0) {
    if (end < n + 4) return -1
    n += 4 + 4 * packet.readUInt16BE(n + 2)
  }
  return n <= end ? n : -1
}

/** The ROC a sequence number belongs to, by RFC 3711 section 3.3.1 (Appendix A's rule); -1 before the first ROC. */
function estimateRoc(s: StreamState, seq: number): number {
  if (s.seq < 0x8000) return seq - s.seq > 0x8000 ? s.roc - 1 : s.roc
  return s.seq - 0x8000 > seq ? s.roc + 1 : s.roc
}

/** Section 3.3.1's update after a packet was processed: the highest index so far moves on. */
function advance(s: StreamState, roc: number, seq: number): void {
  if (roc > s.roc) {
    s.roc = roc
    s.seq = seq
  } else if (roc === s.roc && seq > s.seq) {
    s.seq = seq
  }
}
