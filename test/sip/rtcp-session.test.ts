/**
 * One call's RTCP on a virtual clock: reports at RFC 3550's randomised intervals (the first after half of one),
 * an SR while we send and an RR once we stopped, a report block on the peer's stream (loss, the last SR's time),
 * where reports go (RTP + 1, `a=rtcp`, mux, the peer's own source once its RTCP came), and the media timeout:
 * re-armed by what is heard, off while the peer does not send, one `onTimeout`.
 */
import type { RemoteInfo, Socket } from 'node:dgram'
import t from 'tap'
import { virtualTimers } from '../helpers/virtual-timers.js'
import { decodeRtcp, encodeRtcp, type RtcpPacket } from '../../transports/sip/media/rtcp-codec.js'
import { RTCP_INTERVAL_MS, RtcpSession, type RtcpTarget } from '../../transports/sip/media/rtcp-session.js'
import { SrtpSession } from '../../transports/sip/media/srtp/srtp-session.js'

const clock = () => virtualTimers(1_000_000)

/** A socket that records what was sent where. */
function fakeSocket() {
  const sent: { at: number; to: string; packets: RtcpPacket[] }[] = []
  let time = () => 0
  const socket = {
    on: () => socket,
    send: (bytes: Buffer, port: number, address: string) => {
      const d = decodeRtcp(bytes)
      sent.push({ at: time(), to: `${address}:${port}`, packets: d.kind === 'rtcp' ? [...d.packets] : [] })
    },
  }
  return {
    sent,
    socket: socket as unknown as Socket,
    setClock: (c: () => number) => {
      time = c
    },
  }
}

const from = (address: string, port: number): RemoteInfo => ({ address, port, family: 'IPv4', size: 0 })

function session(target: Partial<RtcpTarget> = {}, opts: { timeoutMs?: number; random?: number; peerSends?: boolean } = {}) {
  const c = clock()
  const rtp = fakeSocket()
  const rtcp = fakeSocket()
  rtp.setClock(c.now)
  rtcp.setClock(c.now)
  let timeouts = 0
  const s = new RtcpSession({
    ssrc: 0xabc,
    cname: 'voxgate-abc@10000',
    rtpSocket: rtp.socket,
    rtcpSocket: rtcp.socket,
    target: { address: '192.0.2.1', rtpPort: 4000, mux: false, ...target },
    peerSends: opts.peerSends ?? true,
    latchable: new Set(['192.0.2.1']),
    mediaTimeoutMs: opts.timeoutMs ?? 0,
    onTimeout: () => void timeouts++,
    timers: c.timers,
    now: c.now,
    random: () => opts.random ?? 0.5,
  })
  return { s, c, rtp, rtcp, timeouts: () => timeouts }
}

t.test('reports: first after half an interval, then every ~5 s randomised; SR while sending, RR after', async (t) => {
  const { s, c, rtcp } = session()
  s.start()
  const start = c.now()
  for (let i = 0; i < 50; i++) s.rtpSent(160 * i, 160)
  c.advance(60_000)
  const gaps = rtcp.sent.map((r, i) => r.at - (i === 0 ? start : rtcp.sent[i - 1]!.at))
  t.equal(Math.round(gaps[0]!), Math.round(RTCP_INTERVAL_MS / 2 / (Math.E - 1.5)), 'the first after half the interval (x1, compensated)')
  t.ok(
    gaps.slice(1).every((g) => Math.abs(g - RTCP_INTERVAL_MS / (Math.E - 1.5)) < 1),
    'then the interval divided by e - 3/2 (random 0.5 -> factor 1)',
  )
  t.equal(rtcp.sent[0]?.to, '192.0.2.1:4001', 'to the RTP port + 1')
  t.match(rtcp.sent[0]?.packets, [{ type: 'sr', ssrc: 0xabc, packetCount: 50, octetCount: 8000 }, { type: 'sdes' }])
  t.equal(rtcp.sent.at(-1)?.packets[0]?.type, 'rr', 'an RR once we sent nothing for two reports')
  s.close()
  t.match(rtcp.sent.at(-1)?.packets, [{ type: 'rr' }, { type: 'sdes' }, { type: 'bye', ssrcs: [0xabc] }], 'a BYE on close')
})

t.test('the randomisation spans x0.5 to x1.5 of the compensated interval', async (t) => {
  for (const [random, factor] of [
    [0, 0.5],
    [0.999, 1.499],
  ] as const) {
    const { s, c, rtcp } = session({}, { random })
    s.start()
    const start = c.now()
    c.advance(20_000)
    t.equal(Math.round(rtcp.sent[0]!.at - start), Math.round((2500 * factor) / (Math.E - 1.5)))
  }
})

t.test('a report block on the peer stream: loss, highest sequence, the last SR and its delay', async (t) => {
  const { s, c, rtcp } = session()
  s.start()
  for (const seq of [65534, 65535, 1, 2]) s.rtpReceived({ ssrc: 77, sequence: seq, timestamp: seq * 160 })
  const sr = encodeRtcp([
    {
      type: 'sr',
      ssrc: 77,
      ntpSeconds: 0x11112222,
      ntpFraction: 0x33334444,
      rtpTimestamp: 0,
      packetCount: 4,
      octetCount: 640,
      reports: [],
    },
  ])
  s.receive(sr, from('192.0.2.1', 4001))
  c.advance(500)
  c.advance(RTCP_INTERVAL_MS)
  const first = rtcp.sent[0]?.packets[0]
  const block = first?.type === 'sr' || first?.type === 'rr' ? first.reports[0] : undefined
  t.match(block, { ssrc: 77, highestSequence: 0x10002, cumulativeLost: 1, lastSr: 0x22223333 }, 'seq 0 lost across the wrap')
  t.ok((block?.delaySinceLastSr ?? 0) > 0, 'the delay since that SR')
  t.equal(s.stats.received, 1)
})

t.test('where reports go: a=rtcp, mux, and the source of the peer RTCP; strangers are ignored', async (t) => {
  t.same(session({ rtcpPort: 5005 }).s.destination, { address: '192.0.2.1', port: 5005 })
  const mux = session({ mux: true })
  t.same(mux.s.destination, { address: '192.0.2.1', port: 4000 })
  mux.s.start()
  mux.c.advance(RTCP_INTERVAL_MS)
  t.equal(mux.rtp.sent.length, 1, 'muxed: sent from the RTP socket')
  t.equal(mux.rtcp.sent.length, 0)
  const { s } = session()
  const rr = encodeRtcp([{ type: 'rr', ssrc: 5, reports: [] }])
  s.receive(rr, from('203.0.113.9', 4001))
  t.equal(s.stats.received, 0, 'RTCP from a stranger does not count')
  s.receive(rr, from('192.0.2.1', 61_000))
  t.same(s.destination, { address: '192.0.2.1', port: 61_000 }, 'symmetric RTCP: replies go where the peer RTCP came from')
  s.receive(Buffer.from([0x80, 0xc9, 0, 9]), from('192.0.2.1', 61_000))
  t.equal(s.stats.invalid, 1, 'an undecodable packet is counted, not taken for liveness')
})

t.test('media timeout: RTP or RTCP re-arms it, hold stops it, one onTimeout', async (t) => {
  const live = session({}, { timeoutMs: 3000 })
  live.s.start()
  for (let i = 0; i < 5; i++) {
    live.c.advance(2000)
    if (i % 2 === 0) live.s.rtpReceived({ ssrc: 1, sequence: i, timestamp: i })
    else live.s.receive(encodeRtcp([{ type: 'rr', ssrc: 1, reports: [] }]), from('192.0.2.1', 4001))
  }
  t.equal(live.timeouts(), 0, 'heard every 2 s: alive')
  live.c.advance(2999)
  t.equal(live.timeouts(), 0)
  live.c.advance(1)
  t.equal(live.timeouts(), 1, 'silent for the timeout: once')
  live.c.advance(60_000)
  t.equal(live.timeouts(), 1, 'and only once')

  const held = session({}, { timeoutMs: 3000, peerSends: false })
  held.s.start()
  held.c.advance(60_000)
  t.equal(held.timeouts(), 0, 'a peer that declared it does not send is never timed out')
  held.s.update({ address: '192.0.2.1', rtpPort: 4000, mux: false }, true)
  held.c.advance(2999)
  t.equal(held.timeouts(), 0, 'off hold: the whole timeout again')
  held.c.advance(1)
  t.equal(held.timeouts(), 1)

  const off = session({}, { timeoutMs: 0 })
  off.s.start()
  off.c.advance(600_000)
  t.equal(off.timeouts(), 0, '0 turns it off')
})

t.test('on an SRTP call reports leave as SRTCP, and the peer SRTCP counts only once it authenticates', async (t) => {
  const ours = Buffer.alloc(30, 1)
  const theirs = Buffer.alloc(30, 2)
  const suite = 'AES_CM_128_HMAC_SHA1_80' as const
  const we = new SrtpSession({ suite, tag: 1, local: ours, remote: theirs })
  const peer = new SrtpSession({ suite, tag: 1, local: theirs, remote: ours })
  const c = clock()
  const wire: Buffer[] = []
  const socket = { on: () => socket, send: (bytes: Buffer) => void wire.push(Buffer.from(bytes)) } as unknown as Socket
  const s = new RtcpSession({
    ssrc: 0xabc,
    cname: 'voxgate-abc@10000',
    rtpSocket: socket,
    rtcpSocket: socket,
    target: { address: '192.0.2.1', rtpPort: 4000, mux: false },
    peerSends: true,
    latchable: new Set(['192.0.2.1']),
    mediaTimeoutMs: 0,
    srtcp: {
      protect: (packet) => we.protectRtcp(packet),
      unprotect: (packet) => {
        const clear = we.unprotectRtcp(packet)
        return typeof clear === 'string' ? undefined : clear
      },
    },
    timers: c.timers,
    now: c.now,
    random: () => 0.5,
  })
  s.start()
  c.advance(10_000)
  t.ok(wire.length > 0, 'reports went out')
  t.equal(decodeRtcp(wire[0]!).kind, 'invalid', 'not readable as plain RTCP (the SRTCP trailer and encryption)')
  const opened = peer.unprotectRtcp(wire[0]!)
  t.not(typeof opened, 'string', 'the peer authenticates and decrypts it')
  t.match(decodeRtcp(opened as Buffer), { kind: 'rtcp', packets: [{ ssrc: 0xabc }, { type: 'sdes' }] })

  const report = encodeRtcp([{ type: 'rr', ssrc: 77, reports: [] }])
  s.receive(report, from('192.0.2.1', 4001))
  t.equal(s.stats.received, 0, 'plain RTCP is refused on an SRTP call')
  t.equal(s.stats.invalid, 1)
  const sealed = peer.protectRtcp(report)
  s.receive(sealed, from('192.0.2.1', 4001))
  t.equal(s.stats.received, 1, 'its SRTCP counts')
  s.receive(sealed, from('192.0.2.1', 4001))
  t.equal(s.stats.received, 1, 'a replay does not')
  s.close()
})
