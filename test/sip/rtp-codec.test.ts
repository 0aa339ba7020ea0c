import t from 'tap'
import { decodeRtp, encodeRtp, isRtcp } from '../../transports/sip/media/rtp-codec.js'

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex')

t.test('decodes a PCMU packet byte by byte (RFC 3550 section 5.1)', async (t) => {
  // V=2, M=1, PT=0, seq 0x1234, ts 0xdeadbeef, ssrc 0x01020304, payload 3 bytes
  const result = decodeRtp(hex('80 80 1234 deadbeef 01020304 ffff7f'))
  if (result.kind !== 'rtp') throw new Error(result.kind)
  const p = result.packet
  t.same(
    [p.marker, p.payloadType, p.sequence, p.timestamp, p.ssrc, p.csrcs, p.extension],
    [true, 0, 0x1234, 0xdeadbeef, 0x01020304, [], undefined],
  )
  t.same(p.payload, hex('ffff7f'))
})

t.test('CSRCs, a header extension and padding are read and stripped', async (t) => {
  // V=2 P=1 X=1 CC=2, PT=8; 2 CSRCs; extension profile 0xbede, 1 word; payload aabb; 2 padding bytes
  const result = decodeRtp(hex('b2 08 0001 00000010 0000000a 00000001 00000002 bede0001 11223344 aabb 0002'))
  if (result.kind !== 'rtp') throw new Error(result.kind)
  const p = result.packet
  t.same(p.csrcs, [1, 2])
  t.same(p.extension, { profile: 0xbede, data: hex('11223344') })
  t.same(p.payload, hex('aabb'))
  t.equal(p.payloadType, 8)
  t.equal(p.marker, false)
})

t.test('RTCP on the RTP port is recognised by RFC 5761 packet types and not decoded as RTP', async (t) => {
  for (const pt of [200, 201, 202, 203, 204, 205, 206, 207]) {
    const rtcp = hex(`81 ${pt.toString(16)} 0001 00000001`)
    t.ok(isRtcp(rtcp), `PT ${pt}`)
  }
  t.same(decodeRtp(hex('81c8 0006 00000001 0000000000000000 00000000 00000000 00000000')), { kind: 'rtcp', packetType: 200 })
  t.notOk(isRtcp(hex('80 00 0001 00000000 00000001')), 'PT 0 is audio')
  t.notOk(isRtcp(hex('80 e5 0001 00000000 00000001')), 'PT 101 with the marker bit is 229, outside 192-223')
})

t.test('malformed datagrams are invalid, never throw', async (t) => {
  const cases: [string, Buffer][] = [
    ['empty', Buffer.alloc(0)],
    ['short', hex('8000 0001')],
    ['version 1', hex('40 00 0001 00000000 00000001')],
    ['CSRC count past the end', hex('8f 00 0001 00000000 00000001 00000001')],
    ['extension past the end', hex('90 00 0001 00000000 00000001 bede00ff 00000000')],
    ['padding longer than the packet', hex('a0 00 0001 00000000 00000001 aa ff')],
    ['zero padding count', hex('a0 00 0001 00000000 00000001 aa 00')],
  ]
  for (const [title, bytes] of cases) t.equal(decodeRtp(bytes).kind, 'invalid', title)
  let thrown = 0
  for (let i = 0; i < 2000; i++) {
    const random = Buffer.from(Array.from({ length: i % 40 }, (_, j) => (i * 7919 + j * 104729) & 0xff))
    try {
      decodeRtp(random)
    } catch {
      thrown++
    }
  }
  t.equal(thrown, 0, '2,000 pseudo-random datagrams')
})

t.test('encode then decode gives the packet back; sequence and timestamp wrap', async (t) => {
  const payload = Buffer.alloc(160, 0xff)
  const wire = encodeRtp({ marker: true, payloadType: 0, sequence: 65536 + 5, timestamp: 2 ** 32 + 7, ssrc: 0xcafebabe, payload })
  t.equal(wire.length, 172)
  const result = decodeRtp(wire)
  if (result.kind !== 'rtp') throw new Error(result.kind)
  t.same([result.packet.marker, result.packet.sequence, result.packet.timestamp, result.packet.ssrc], [true, 5, 7, 0xcafebabe])
  t.same(result.packet.payload, payload)
})
