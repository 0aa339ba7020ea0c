/**
 * Pure codec for RTCP compound packets (RFC 3550 section 6): sender and receiver reports (6.4.1, 6.4.2), source
 * descriptions (6.5), BYE (6.6) and APP (6.7); any other packet type (RFC 4585 feedback, RFC 3611 XR) is kept
 * as opaque bytes, since a peer may send it and it still proves the peer is there. Decoding checks what
 * appendix A.2 checks (version 2, lengths that add up to the datagram, padding only on the last packet) and
 * returns `invalid` with a reason, never throws; the first packet need not be a report (RFC 5506 reduced size).
 */

/** RTCP packet types (RFC 3550 section 12.1). */
export const RTCP_SR = 200
export const RTCP_RR = 201
export const RTCP_SDES = 202
export const RTCP_BYE = 203
export const RTCP_APP = 204
/** SDES item type of the canonical name (RFC 3550 section 6.5.1). */
export const SDES_CNAME = 1
/** Most report blocks or sources one packet's 5-bit count can name. */
const MAX_COUNT = 31

/** A reception report block (RFC 3550 section 6.4.1): what one sender's stream looked like to us. */
export interface ReportBlock {
  readonly ssrc: number
  /** Packets lost since the previous report, as a fraction of 256. */
  readonly fractionLost: number
  /** Packets lost since reception began (signed 24 bits: duplicates can make it negative). */
  readonly cumulativeLost: number
  /** Highest sequence number received, with the count of wraps in the upper 16 bits. */
  readonly highestSequence: number
  /** Interarrival jitter in timestamp units. */
  readonly jitter: number
  /** The middle 32 bits of the NTP timestamp of the last SR received from this source; 0 without one. */
  readonly lastSr: number
  /** Delay since that SR, in 1/65536 s. */
  readonly delaySinceLastSr: number
}

/** One SDES item (CNAME, NAME, TOOL...). */
export interface SdesItem {
  readonly type: number
  readonly text: string
}

/** One RTCP packet of a compound packet. */
export type RtcpPacket =
  | {
      readonly type: 'sr'
      readonly ssrc: number
      /** NTP timestamp, seconds since 1900 and fraction of a second in 1/2^32. */
      readonly ntpSeconds: number
      readonly ntpFraction: number
      readonly rtpTimestamp: number
      readonly packetCount: number
      readonly octetCount: number
      readonly reports: readonly ReportBlock[]
    }
  | { readonly type: 'rr'; readonly ssrc: number; readonly reports: readonly ReportBlock[] }
  | { readonly type: 'sdes'; readonly chunks: readonly { readonly ssrc: number; readonly items: readonly SdesItem[] }[] }
  | { readonly type: 'bye'; readonly ssrcs: readonly number[]; readonly reason?: string | undefined }
  | { readonly type: 'app'; readonly subtype: number; readonly ssrc: number; readonly name: string; readonly data: Buffer }
  | { readonly type: 'other'; readonly packetType: number; readonly count: number; readonly body: Buffer }

/** What a datagram turned out to be. */
export type RtcpDecodeResult =
  | { readonly kind: 'rtcp'; readonly packets: readonly RtcpPacket[] }
  | { readonly kind: 'invalid'; readonly reason: string }

/** Decodes a compound RTCP packet. */
export function decodeRtcp(bytes: Uint8Array): RtcpDecodeResult {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
  if (buf.length < 4) return invalid(`${buf.length} bytes is shorter than an RTCP header`)
  const packets: RtcpPacket[] = []
  let at = 0
  while (at < buf.length) {
    if (buf.length - at < 4) return invalid('trailing bytes shorter than an RTCP header')
    const first = buf[at]!
    if (first >> 6 !== 2) return invalid(`version ${first >> 6}, not 2`)
    const padded = (first & 0x20) !== 0
    const count = first & 0x1f
    const packetType = buf[at + 1]!
    const length = (buf.readUInt16BE(at + 2) + 1) * 4
    if (at + length > buf.length) return invalid(`a packet of ${length} bytes overruns the datagram`)
    let end = at + length
    if (padded) {
      // Section 6.4.1: only the last packet of a compound may be padded, by the count in its last byte.
      if (end !== buf.length) return invalid('padding on a packet that is not the last')
      const pad = buf[end - 1]!
      if (pad === 0 || pad > length - 4) return invalid(`padding of ${pad} bytes`)
      end -= pad
    }
    const packet = decodePacket(packetType, count, buf.subarray(at + 4, end))
    if (typeof packet === 'string') return invalid(packet)
    packets.push(packet)
    at += length
  }
  return { kind: 'rtcp', packets }
}

function decodePacket(packetType: number, count: number, body: Buffer): RtcpPacket | string {
  switch (packetType) {
    case RTCP_SR: {
      if (body.length < 24 + count * 24) return `a sender report with ${count} blocks in ${body.length} bytes`
      return {
        type: 'sr',
        ssrc: body.readUInt32BE(0),
        ntpSeconds: body.readUInt32BE(4),
        ntpFraction: body.readUInt32BE(8),
        rtpTimestamp: body.readUInt32BE(12),
        packetCount: body.readUInt32BE(16),
        octetCount: body.readUInt32BE(20),
        reports: readBlocks(body, 24, count),
      }
    }
    case RTCP_RR:
      if (body.length < 4 + count * 24) return `a receiver report with ${count} blocks in ${body.length} bytes`
      return { type: 'rr', ssrc: body.readUInt32BE(0), reports: readBlocks(body, 4, count) }
    case RTCP_SDES:
      return decodeSdes(body, count)
    case RTCP_BYE: {
      if (body.length < count * 4) return `a BYE naming ${count} sources in ${body.length} bytes`
      const ssrcs = Array.from({ length: count }, (_, i) => body.readUInt32BE(i * 4))
      const rest = count * 4
      if (body.length <= rest) return { type: 'bye', ssrcs }
      const len = body[rest]!
      if (rest + 1 + len > body.length) return 'a BYE reason longer than its packet'
      return { type: 'bye', ssrcs, reason: body.toString('utf8', rest + 1, rest + 1 + len) }
    }
    case RTCP_APP:
      if (body.length < 8) return `an APP packet of ${body.length} bytes`
      return { type: 'app', subtype: count, ssrc: body.readUInt32BE(0), name: body.toString('latin1', 4, 8), data: body.subarray(8) }
    default:
      return { type: 'other', packetType, count, body }
  }
}

function readBlocks(body: Buffer, from: number, count: number): ReportBlock[] {
  const blocks: ReportBlock[] = []
  for (let i = 0; i < count; i++) {
    const at = from + i * 24
    const lost = body.readUInt32BE(at + 4)
    const cumulative = lost & 0xffffff
    blocks.push({
      ssrc: body.readUInt32BE(at),
      fractionLost: lost >>> 24,
      cumulativeLost: cumulative & 0x800000 ? cumulative - 0x1000000 : cumulative,
      highestSequence: body.readUInt32BE(at + 8),
      jitter: body.readUInt32BE(at + 12),
      lastSr: body.readUInt32BE(at + 16),
      delaySinceLastSr: body.readUInt32BE(at + 20),
    })
  }
  return blocks
}

/** Section 6.5: chunks of an SSRC and items, each chunk ended by a null item and padded to 32 bits. */
function decodeSdes(body: Buffer, count: number): RtcpPacket | string {
  const chunks: { ssrc: number; items: SdesItem[] }[] = []
  let at = 0
  for (let c = 0; c < count; c++) {
    if (at + 4 > body.length) return `an SDES packet with ${count} chunks in ${body.length} bytes`
    const ssrc = body.readUInt32BE(at)
    at += 4
    const items: SdesItem[] = []
    for (;;) {
      if (at >= body.length) return 'an SDES chunk without its terminating null item'
      const type = body[at]!
      if (type === 0) break
      if (at + 2 > body.length) return 'an SDES item cut short'
      const len = body[at + 1]!
      if (at + 2 + len > body.length) return 'an SDES item longer than its packet'
      items.push({ type, text: body.toString('utf8', at + 2, at + 2 + len) })
      at += 2 + len
    }
    at += 4 - (at % 4)
    chunks.push({ ssrc, items })
  }
  return { type: 'sdes', chunks }
}

/** Encodes packets as one compound packet (the caller puts a report first, RFC 3550 section 6.1). */
export function encodeRtcp(packets: readonly RtcpPacket[]): Buffer {
  return Buffer.concat(packets.map(encodePacket))
}

function encodePacket(packet: RtcpPacket): Buffer {
  switch (packet.type) {
    case 'sr': {
      const reports = packet.reports.slice(0, MAX_COUNT)
      const body = Buffer.alloc(24)
      body.writeUInt32BE(packet.ssrc >>> 0, 0)
      body.writeUInt32BE(packet.ntpSeconds >>> 0, 4)
      body.writeUInt32BE(packet.ntpFraction >>> 0, 8)
      body.writeUInt32BE(packet.rtpTimestamp >>> 0, 12)
      body.writeUInt32BE(packet.packetCount >>> 0, 16)
      body.writeUInt32BE(packet.octetCount >>> 0, 20)
      return framed(RTCP_SR, reports.length, Buffer.concat([body, ...reports.map(writeBlock)]))
    }
    case 'rr': {
      const reports = packet.reports.slice(0, MAX_COUNT)
      return framed(RTCP_RR, reports.length, Buffer.concat([u32(packet.ssrc), ...reports.map(writeBlock)]))
    }
    case 'sdes': {
      const chunks = packet.chunks.slice(0, MAX_COUNT).map((chunk) => {
        const items = chunk.items.map((item) => {
          const text = Buffer.from(item.text, 'utf8').subarray(0, 255)
          return Buffer.concat([Buffer.from([item.type, text.length]), text])
        })
        const raw = Buffer.concat([u32(chunk.ssrc), ...items])
        // At least one null octet ends the item list, then nulls up to the next 32-bit boundary.
        return Buffer.concat([raw, Buffer.alloc(4 - (raw.length % 4))])
      })
      return framed(RTCP_SDES, chunks.length, Buffer.concat(chunks))
    }
    case 'bye': {
      const ssrcs = packet.ssrcs.slice(0, MAX_COUNT).map(u32)
      const reason = packet.reason === undefined ? Buffer.alloc(0) : Buffer.from(packet.reason, 'utf8').subarray(0, 255)
      const tail = packet.reason === undefined ? reason : Buffer.concat([Buffer.from([reason.length]), reason])
      return framed(RTCP_BYE, ssrcs.length, pad4(Buffer.concat([...ssrcs, tail])))
    }
    case 'app': {
      const name = Buffer.alloc(4, 0x20)
      name.write(packet.name.slice(0, 4), 'latin1')
      return framed(RTCP_APP, packet.subtype & 0x1f, pad4(Buffer.concat([u32(packet.ssrc), name, packet.data])))
    }
    case 'other':
      return framed(packet.packetType, packet.count & 0x1f, pad4(packet.body))
  }
}

function writeBlock(block: ReportBlock): Buffer {
  const b = Buffer.alloc(24)
  b.writeUInt32BE(block.ssrc >>> 0, 0)
  const lost = Math.max(-0x800000, Math.min(0x7fffff, Math.trunc(block.cumulativeLost))) & 0xffffff
  b.writeUInt32BE(((Math.max(0, Math.min(255, block.fractionLost)) << 24) | lost) >>> 0, 4)
  b.writeUInt32BE(block.highestSequence >>> 0, 8)
  b.writeUInt32BE(block.jitter >>> 0, 12)
  b.writeUInt32BE(block.lastSr >>> 0, 16)
  b.writeUInt32BE(block.delaySinceLastSr >>> 0, 20)
  return b
}

/** The 4-byte header (V=2, no padding, count, type, length in 32-bit words minus one) before `body`. */
function framed(packetType: number, count: number, body: Buffer): Buffer {
  const header = Buffer.alloc(4)
  header[0] = 0x80 | count
  header[1] = packetType
  header.writeUInt16BE(body.length / 4, 2)
  return Buffer.concat([header, body])
}

function u32(value: number): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(value >>> 0, 0)
  return b
}

function pad4(b: Buffer): Buffer {
  return b.length % 4 === 0 ? b : Buffer.concat([b, Buffer.alloc(4 - (b.length % 4))])
}

function invalid(reason: string): RtcpDecodeResult {
  return { kind: 'invalid', reason }
}
