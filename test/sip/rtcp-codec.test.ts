/**
 * The RTCP codec against raw bytes laid out as RFC 3550 section 6 draws them: a sender report (the field values
 * of pion/rtcp's decoding test, with the length field RFC 3550 requires), a compound RR + SDES + BYE built byte by byte, what appendix A.2's validity
 * checks refuse, and our own compound packets read back.
 */
import t from 'tap'
import { decodeRtcp, encodeRtcp, type RtcpPacket } from '../../transports/sip/media/rtcp-codec.js'
import { compactNtp, ntpTime } from '../../transports/sip/media/rtcp-statistics.js'

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex')

/** Section 6.4.1: V=2 RC=1 PT=200 length=12 (13 words), then sender info and one report block. */
const SR = hex(`
  81c8 000c  902f9e2e
  da8bd1fc dddda05a  aaf4edd5  00000001  00000002
  bc5e9a40  00000000  000046e1  00000111  09f36432  00024a79`)

t.test('a sender report (section 6.4.1): sender info and a report block', async (t) => {
  const d = decodeRtcp(SR)
  t.equal(d.kind, 'rtcp')
  if (d.kind !== 'rtcp') return
  t.same(d.packets, [
    {
      type: 'sr',
      ssrc: 0x902f9e2e,
      ntpSeconds: 0xda8bd1fc,
      ntpFraction: 0xdddda05a,
      rtpTimestamp: 0xaaf4edd5,
      packetCount: 1,
      octetCount: 2,
      reports: [
        {
          ssrc: 0xbc5e9a40,
          fractionLost: 0,
          cumulativeLost: 0,
          highestSequence: 0x46e1,
          jitter: 273,
          lastSr: 0x09f36432,
          delaySinceLastSr: 150137,
        },
      ],
    },
  ])
  t.same(encodeRtcp(d.packets), SR, 'encodes back to the same bytes')
})

t.test('a compound RR + SDES CNAME + BYE with a reason, padding on the last packet', async (t) => {
  const bytes = hex(`
    81c9 0007  00000001
      00000002  19fffffe  0001ffff  00000010  00000000  00000000
    81ca 0003  00000001  0103 616263 000000
    a1cb 0003  00000001  04 62796521  000003`)
  // RR: one block, fraction 0x19 (25/256), cumulative -2 (duplicates), 1 wrap, highest 0xffff.
  // SDES: one chunk, CNAME "abc" and the null item ending it (4+2+3+1 = 10 -> 12 bytes).
  // BYE: padding bit, SC=1, reason "bye!", then three bytes of padding whose last byte counts them.
  const d = decodeRtcp(bytes)
  t.equal(d.kind, 'rtcp', d.kind === 'invalid' ? d.reason : '')
  if (d.kind !== 'rtcp') return
  t.same(d.packets[0], {
    type: 'rr',
    ssrc: 1,
    reports: [{ ssrc: 2, fractionLost: 0x19, cumulativeLost: -2, highestSequence: 0x1ffff, jitter: 16, lastSr: 0, delaySinceLastSr: 0 }],
  })
  t.same(d.packets[1], { type: 'sdes', chunks: [{ ssrc: 1, items: [{ type: 1, text: 'abc' }] }] })
  t.same(d.packets[2], { type: 'bye', ssrcs: [1], reason: 'bye!' })
})

t.test('feedback and XR packets are kept as opaque ones; APP is read', async (t) => {
  const d = decodeRtcp(hex('80c9 0001 00000007  81cd 0002 00000007 00000008  80cc 0003 00000007 74657374 01020304'))
  t.equal(d.kind, 'rtcp')
  if (d.kind !== 'rtcp') return
  t.same(
    d.packets.map((p) => p.type),
    ['rr', 'other', 'app'],
  )
  t.match(d.packets[1], { type: 'other', packetType: 205, count: 1 })
  t.match(d.packets[2], { type: 'app', subtype: 0, ssrc: 7, name: 'test' })
})

t.test('what appendix A.2 refuses: never a throw', async (t) => {
  const cases: [string, string][] = [
    ['', 'shorter than an RTCP header'],
    ['41c9 0001 00000001', 'version 1'],
    ['81c9 0007 00000001', 'overruns the datagram'],
    ['80c9 0001 00000001 00', 'trailing bytes'],
    ['a0c9 0001 00000001 80ca 0000', 'padding on a packet that is not the last'],
    ['a0c9 0001 00000000', 'padding of 0 bytes'],
    ['81c8 0001 00000001', 'sender report with 1 blocks'],
    ['81ca 0001 00000001', 'SDES chunk without its terminating null item'],
    ['81ca 0002 00000001 0109 6162', 'SDES item longer than its packet'],
    ['82cb 0001 00000001', 'a BYE naming 2 sources'],
    ['80cb 0001 09616263', 'BYE reason longer than its packet'],
  ]
  for (const [bytes, reason] of cases) {
    const d = decodeRtcp(hex(bytes))
    t.equal(d.kind, 'invalid', bytes)
    if (d.kind === 'invalid') t.match(d.reason, reason, bytes)
  }
})

t.test('our compound packets read back: SR + SDES + BYE, and counts and lengths as RFC 3550 lays them out', async (t) => {
  const packets: RtcpPacket[] = [
    {
      type: 'sr',
      ssrc: 0xdeadbeef,
      ntpSeconds: 0xe0000000,
      ntpFraction: 0x80000000,
      rtpTimestamp: 160,
      packetCount: 50,
      octetCount: 8000,
      reports: [
        { ssrc: 9, fractionLost: 255, cumulativeLost: -8_388_608, highestSequence: 0xffffffff, jitter: 3, lastSr: 4, delaySinceLastSr: 5 },
      ],
    },
    { type: 'sdes', chunks: [{ ssrc: 0xdeadbeef, items: [{ type: 1, text: 'voxgate@10000' }] }] },
    { type: 'bye', ssrcs: [0xdeadbeef] },
  ]
  const bytes = encodeRtcp(packets)
  t.equal(bytes.length % 4, 0, 'a whole number of 32-bit words')
  t.equal(bytes[0], 0x81, 'V=2, no padding, one block')
  t.equal(bytes.readUInt16BE(2), 12, 'SR length: 13 words - 1')
  t.equal(bytes[52 + 1], 202, 'the SDES follows')
  const d = decodeRtcp(bytes)
  t.equal(d.kind, 'rtcp')
  if (d.kind === 'rtcp') t.same(d.packets, packets)
})

t.test('NTP timestamps (section 4) and the compact form LSR carries', async (t) => {
  const ntp = ntpTime(Date.UTC(2026, 0, 1) + 500)
  t.equal(ntp.seconds, Date.UTC(2026, 0, 1) / 1000 + 2_208_988_800)
  t.equal(ntp.fraction, 0x80000000, 'half a second')
  t.equal(compactNtp(0xda8bd1fc, 0xdddda05a), 0xd1fcdddd)
})
