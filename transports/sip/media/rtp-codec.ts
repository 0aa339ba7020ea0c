/**
 * Pure codec for RTP packets (RFC 3550 section 5.1): the 12-byte fixed header, CSRCs, a header extension and
 * padding. RTCP arriving on the same port (RFC 5761 section 4: packet types 192-223 in the second byte) is told
 * apart and reported as `rtcp` so the transport can ignore it; anything else malformed is `invalid`, never a throw.
 */

/** A decoded RTP packet. `payload` is a view into the datagram, without padding. */
export interface RtpPacket {
  readonly marker: boolean
  readonly payloadType: number
  /** 16-bit sequence number. */
  readonly sequence: number
  /** 32-bit media timestamp (8000 Hz for G.711 and telephone-event). */
  readonly timestamp: number
  readonly ssrc: number
  readonly csrcs: readonly number[]
  /** The header extension, when the X bit is set (RFC 3550 section 5.3.1). */
  readonly extension?: { readonly profile: number; readonly data: Buffer } | undefined
  readonly payload: Buffer
}

/** What a datagram on the RTP port turned out to be. */
export type RtpDecodeResult =
  | { readonly kind: 'rtp'; readonly packet: RtpPacket }
  | { readonly kind: 'rtcp'; readonly packetType: number }
  | { readonly kind: 'invalid'; readonly reason: string }

/** RFC 3550 fixed header length. */
export const RTP_HEADER_BYTES = 12

/** True when the datagram is RTCP by RFC 5761's rule: version 2 and a packet type of 192-223. */
export function isRtcp(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0]! >> 6 === 2 && bytes[1]! >= 192 && bytes[1]! <= 223
}

/** Decodes one datagram. */
export function decodeRtp(bytes: Uint8Array): RtpDecodeResult {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
  if (buf.length < RTP_HEADER_BYTES) return invalid(`${buf.length} bytes is shorter than an RTP header`)
  const first = buf[0]!
  if (first >> 6 !== 2) return invalid(`version ${first >> 6}`)
  if (isRtcp(buf)) return { kind: 'rtcp', packetType: buf[1]! }
  const padding = (first & 0x20) !== 0
  const hasExtension = (first & 0x10) !== 0
  const csrcCount = first & 0x0f
  let offset = RTP_HEADER_BYTES + 4 * csrcCount
  if (buf.length < offset) return invalid('CSRC list runs past the packet')
  const csrcs: number[] = []
  for (let i = 0; i < csrcCount; i++) csrcs.push(buf.readUInt32BE(RTP_HEADER_BYTES + 4 * i))
  let extension: RtpPacket['extension']
  if (hasExtension) {
    if (buf.length < offset + 4) return invalid('extension header runs past the packet')
    const profile = buf.readUInt16BE(offset)
    const words = buf.readUInt16BE(offset + 2)
    const end = offset + 4 + 4 * words
    if (buf.length < end) return invalid('extension runs past the packet')
    extension = { profile, data: buf.subarray(offset + 4, end) }
    offset = end
  }
  let end = buf.length
  if (padding) {
    const count = buf[buf.length - 1]!
    if (count === 0 || offset + count > buf.length) return invalid(`bad padding count ${count}`)
    end -= count
  }
  return {
    kind: 'rtp',
    packet: {
      marker: (buf[1]! & 0x80) !== 0,
      payloadType: buf[1]! & 0x7f,
      sequence: buf.readUInt16BE(2),
      timestamp: buf.readUInt32BE(4),
      ssrc: buf.readUInt32BE(8),
      csrcs,
      extension,
      payload: buf.subarray(offset, end),
    },
  }
}

/** The fields needed to write a packet; CSRCs, extension and padding are not sent by this gateway. */
export interface RtpPacketOut {
  readonly marker?: boolean
  readonly payloadType: number
  readonly sequence: number
  readonly timestamp: number
  readonly ssrc: number
  readonly payload: Uint8Array
}

/**
 * Encodes a packet with the fixed header only; `ssrc` (the stream's own) in place of the packet's when given.
 * `tailroom`: octets left after the packet (unwritten), for SRTP's tag to be added where the packet lies.
 */
export function encodeRtp(packet: Omit<RtpPacketOut, 'ssrc'> & { readonly ssrc?: number }, ssrc = packet.ssrc ?? 0, tailroom = 0): Buffer {
  const buf = Buffer.allocUnsafe(RTP_HEADER_BYTES + packet.payload.length + tailroom)
  buf[0] = 0x80
  buf[1] = (packet.marker === true ? 0x80 : 0) | (packet.payloadType & 0x7f)
  buf.writeUInt16BE(packet.sequence & 0xffff, 2)
  buf.writeUInt32BE(packet.timestamp >>> 0, 4)
  buf.writeUInt32BE(ssrc >>> 0, 8)
  buf.set(packet.payload, RTP_HEADER_BYTES)
  return buf
}

function invalid(reason: string): RtpDecodeResult {
  return { kind: 'invalid', reason }
}
