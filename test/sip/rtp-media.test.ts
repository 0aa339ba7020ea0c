/**
 * One call's RTP over real UDP sockets: symmetric RTP latches only to the SDP's or the signalling peer's
 * address, a stranger's packets are ignored before and after, RTCP and garbage are dropped without harm, audio
 * comes out as 20 ms frames, digits as digits, and the port is free again after close.
 */
import { createSocket, type Socket } from 'node:dgram'
import t, { type Test } from 'tap'
import { RtpPortPool } from '../../transports/sip/media/rtp-port-pool.js'
import { RtpMedia } from '../../transports/sip/media/rtp-media.js'
import { decodeRtp, encodeRtp } from '../../transports/sip/media/rtp-codec.js'
import { dtmfPackets } from '../../transports/sip/media/dtmf-sender.js'
import type { NegotiatedAudio } from '../../transports/sip/media/sdp-offer-answer.js'
import { eventually } from '../helpers/eventually.js'

const min = 50_000 + 2 * Math.floor(Math.random() * 4_000)

async function socket(t: Test, address: string): Promise<Socket & { got: Buffer[] }> {
  const s = Object.assign(createSocket('udp4'), { got: [] as Buffer[] })
  await new Promise<void>((resolve) => s.bind(0, address, resolve))
  s.on('message', (m) => s.got.push(m))
  t.teardown(() => s.close())
  return s
}

const audio = (port: number): NegotiatedAudio => ({
  codec: 'PCMU',
  payloadType: 0,
  telephoneEventPayloadType: 101,
  remoteAddress: '127.0.0.1',
  remotePort: port,
  remoteDirection: 'sendrecv',
  held: false,
})

const rtp = (sequence: number, payloadType = 0, payload: Buffer = Buffer.alloc(160, 0x10), timestamp = sequence * 160) =>
  encodeRtp({ payloadType, sequence, timestamp, ssrc: 7, payload })

t.test('latching, strangers, RTCP and garbage; frames and digits out; the port freed on close', async (t) => {
  const pool = new RtpPortPool({ host: '127.0.0.1', min, max: min + 10 })
  const lease = await pool.acquire()
  if (lease === null) throw new Error('no port')
  const sdpPeer = await socket(t, '127.0.0.1')
  // The caller behind NAT: same address as the SDP says, another port.
  const natPeer = await socket(t, '127.0.0.1')
  const stranger = await socket(t, '127.0.0.2')
  const frames: Buffer[] = []
  const digits: string[] = []
  const media = new RtpMedia(lease, audio(sdpPeer.address().port), '127.0.0.1', {
    onAudio: (f) => frames.push(f),
    onDigit: (d) => digits.push(d),
  })
  t.teardown(() => media.close())
  media.start()
  const send = (from: Socket, bytes: Buffer) => from.send(bytes, lease.port, '127.0.0.1')

  // Before any packet: our audio goes to the SDP's address.
  media.enqueue(Buffer.alloc(160, 0x22))
  await eventually(async () => (sdpPeer.got.length > 0 ? true : undefined))
  t.equal(decodeRtp(sdpPeer.got[0]!).kind, 'rtp')

  send(stranger, rtp(1))
  send(natPeer, Buffer.from([0x80, 200, 0, 6, 0, 0, 0, 7])) // RTCP sender report header
  send(natPeer, Buffer.from('not rtp at all'))
  await eventually(async () => (media.stats.received >= 3 ? true : undefined))
  t.equal(media.stats.foreign, 1, 'the stranger cannot latch')
  t.notOk(media.peer.latched, 'RTCP and garbage do not latch')

  for (let seq = 10; seq < 16; seq++) send(natPeer, rtp(seq))
  await eventually(async () => (media.peer.latched ? true : undefined))
  t.same(media.peer, { address: '127.0.0.1', port: natPeer.address().port, latched: true }, 'latched to where packets come from')
  send(stranger, rtp(16, 0, Buffer.alloc(160, 0x55)))
  await eventually(async () => (frames.some((f) => f[0] === 0x10) ? true : undefined), 2_000)
  t.notOk(
    frames.some((f) => f[0] === 0x55),
    'the stranger injects nothing after the latch either',
  )
  t.ok(
    frames.every((f) => f.length === 160),
    '20 ms frames',
  )

  media.enqueue(Buffer.alloc(160, 0x33))
  await eventually(async () => (natPeer.got.some((b) => b[12] === 0x33) ? true : undefined))
  t.pass('our audio follows the latch')

  for (const p of dtmfPackets({ digit: '7', durationMs: 60, timestamp: 99_000, sequence: 20 }) ?? [])
    send(natPeer, rtp(p.sequence, 101, p.payload, p.timestamp))
  await eventually(async () => (digits.length > 0 ? true : undefined))
  t.same(digits, ['7'], 'one digit per key press')

  media.close()
  t.equal(pool.inUse, 0)
  const again = await pool.acquire()
  t.ok(again !== null, 'the range still hands out ports')
  again?.release()
})

t.test('a full range refuses with null, and a port another process holds is skipped', async (t) => {
  const base = min + 100
  const squatter = createSocket('udp4')
  await new Promise<void>((resolve) => squatter.bind(base, '127.0.0.1', resolve))
  t.teardown(() => squatter.close())
  // Two RTP ports, each with its RTCP neighbour inside the range.
  const pool = new RtpPortPool({ host: '127.0.0.1', min: base, max: base + 3 })
  const first = await pool.acquire()
  t.equal(first?.port, base + 2, 'the taken port is skipped')
  t.equal(await pool.acquire(), null, 'no port left')
  first?.release()
  first?.release()
  t.equal(pool.inUse, 0, 'release is idempotent')
})

t.test('steady RTP: silence in every slot while the agent is quiet, nothing while the peer holds', async (t) => {
  const pool = new RtpPortPool({ host: '127.0.0.1', min: min + 200, max: min + 210 })
  const lease = await pool.acquire()
  if (lease === null) throw new Error('no port')
  const peer = await socket(t, '127.0.0.1')
  const frames: Buffer[] = []
  const media = new RtpMedia(lease, audio(peer.address().port), '127.0.0.1', { onAudio: (f) => frames.push(f), onDigit: () => undefined })
  t.teardown(() => media.close())
  media.start()
  await eventually(async () => (peer.got.length >= 5 ? true : undefined))
  const quiet = peer.got.map((b) => decodeRtp(b)).flatMap((d) => (d.kind === 'rtp' ? [d.packet] : []))
  t.ok(
    quiet.every((p) => p.payloadType === 0 && p.payload.length === 160 && p.payload.every((b) => b === 0xff)),
    'PCMU silence frames with nothing queued',
  )
  t.ok(
    quiet.slice(1).every((p, i) => p.sequence === (quiet[i]!.sequence + 1) % 0x10000 && !p.marker),
    'one contiguous stream',
  )

  media.update({ ...audio(peer.address().port), remoteDirection: 'sendonly', held: true })
  // The hold takes effect at the next slot; one packet may already be on its way.
  const atHold = peer.got.length + 1
  // Time passes while held, measured by the caller's own audio coming out one frame per 20 ms.
  for (let seq = 0; seq < 10; seq++) peer.send(rtp(seq), lease.port, '127.0.0.1')
  await eventually(async () => (frames.length >= 8 ? true : undefined))
  t.ok(peer.got.length <= atHold, `nothing sent while held (${peer.got.length - atHold + 1} packets)`)

  media.update(audio(peer.address().port))
  const before = peer.got.length
  await eventually(async () => (peer.got.length >= before + 3 ? true : undefined))
  const resumed = decodeRtp(peer.got[before]!)
  t.ok(resumed.kind === 'rtp' && resumed.packet.marker, 'silence again after the unhold, the marker on its first packet')
})

t.test('comfort noise: a peer that took CN gets one CN packet a second while the agent is quiet, and its CN counts as heard', async (t) => {
  const pool = new RtpPortPool({ host: '127.0.0.1', min: min + 300, max: min + 310 })
  const lease = await pool.acquire()
  if (lease === null) throw new Error('no port')
  const peer = await socket(t, '127.0.0.1')
  const frames: Buffer[] = []
  const media = new RtpMedia(lease, { ...audio(peer.address().port), comfortNoisePayloadType: 13 }, '127.0.0.1', {
    onAudio: (f) => frames.push(f),
    onDigit: () => undefined,
  })
  t.teardown(() => media.close())
  media.start()
  const packets = () => peer.got.map((b) => decodeRtp(b)).flatMap((d) => (d.kind === 'rtp' ? [d.packet] : []))
  const arrivals: number[] = []
  peer.on('message', () => arrivals.push(performance.now()))
  // A quiet agent: steady silence would be 50 packets a second.
  await eventually(async () => (peer.got.length >= 2 ? true : undefined), 5_000)
  const quiet = packets()
  t.equal(quiet.length, 2, 'CN at once and again later, nothing between')
  t.ok(arrivals[1]! - arrivals[0]! > 800, `the second CN a second after the first (${(arrivals[1]! - arrivals[0]!).toFixed(0)} ms)`)
  t.ok(
    quiet.every((p) => p.payloadType === 13 && p.payload.length === 1 && p.payload[0] === 70),
    'CN packets, -70 dBov',
  )

  media.enqueue(Buffer.alloc(160, 0x22))
  await eventually(async () => (packets().some((p) => p.payloadType === 0) ? true : undefined))
  const spurt = packets().find((p) => p.payloadType === 0)!
  t.ok(spurt.marker, 'the audio after the pause starts a talkspurt (marker)')
  await eventually(async () => (packets().at(-1)?.payloadType === 13 ? true : undefined))
  t.pass('CN again once the audio ran out')

  // The peer's own CN: heard (RTCP counts it, it latches), not ignored, and no audio comes of it.
  for (let seq = 0; seq < 5; seq++) peer.send(rtp(seq, 13, Buffer.from([60])), lease.port, '127.0.0.1')
  await eventually(async () => (media.stats.received >= 5 ? true : undefined))
  t.equal(media.stats.ignored, 0, 'CN is not an unknown payload')
  t.equal(media.rtcp.statistics.packetsReceived, 5, "every CN packet counted as heard (RTCP's receiver report, the media timeout)")
  t.equal(frames.length, 0, 'no caller audio from CN')
})
