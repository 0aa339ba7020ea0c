/**
 * Nothing left hanging, over a real endpoint and raw sockets: an RFC 2543 INVITE (no branch cookie,
 * no tags) whose 200 is never acknowledged gets its 200 resent, then a BYE, and its session, call slot and RTP
 * ports are freed; a peer that stops sending RTP is hung up `media_timeout`, one holding the call is not, and
 * RTCP (ours arriving on the peer's RTP port + 1 as RFC 3550 packets, the peer's keeping the call alive; both on
 * the RTP port when the peer offered `a=rtcp-mux`). Transaction timers run 50 times faster; media ones are real.
 */
import { createSocket, type Socket } from 'node:dgram'
import { randomBytes } from 'node:crypto'
import t, { type Test } from 'tap'
import type { EndReason } from '../../core/end-reason.js'
import { silentLogger } from '../../core/log.js'
import { decodeRtcp, encodeRtcp, type RtcpPacket } from '../../transports/sip/media/rtcp-codec.js'
import type { SipAdmission } from '../../transports/sip/calls/sip-admission.js'
import type { SipSessionPort } from '../../transports/sip/calls/sip-call-transport.js'
import { SipEndpoint } from '../../transports/sip/endpoint/sip-endpoint.js'
import { decodeSipMessage, encodeSipMessage } from '../../transports/sip/message/sip-message-codec.js'
import { getHeader, type SipMessage, type SipResponse } from '../../transports/sip/message/sip-message.js'
import { buildResponse } from '../../transports/sip/message/sip-response.js'
import type { TimerScheduler } from '../../transports/sip/timer-scheduler.js'
import { eventually } from '../helpers/eventually.js'
import { SipCaller } from '../helpers/sip-caller.js'
import { Inbox } from '../helpers/sip-wire.js'

const rtpMin = 30_000 + 2 * Math.floor(Math.random() * 4_000)

/** RFC 3261 timers 50 times faster: timer G after 10 ms, timer L (64*T1) after 640 ms. */
const fastTimers: TimerScheduler = {
  schedule(ms, fire) {
    const handle = setTimeout(fire, ms / 50)
    return { cancel: () => clearTimeout(handle) }
  },
}

/** A session that records how it ended. */
function recordedSession(): SipSessionPort & { ends: string[] } {
  const ends: string[] = []
  return {
    id: 'sess_live',
    isEnded: false,
    ends,
    input: { pushAudio: () => undefined, dtmf: () => undefined } as unknown as SipSessionPort['input'],
    end: async (reason: EndReason) => void ends.push(`end:${reason}`),
    transportClosed: async (reason?: EndReason) => void ends.push(`closed:${reason}`),
  }
}

async function endpoint(t: Test, opts: { mediaTimeoutMs?: number; opened?: () => void } = {}) {
  const session = recordedSession()
  const admission: SipAdmission = async () => ({
    admit: true,
    open: async () => {
      opts.opened?.()
      return { admit: true, session }
    },
  })
  const sip = await SipEndpoint.start({
    timers: fastTimers,
    host: '127.0.0.1',
    port: 0,
    publicHost: '127.0.0.1',
    log: silentLogger(),
    admission,
    rtpPorts: { min: rtpMin, max: rtpMin + 20 },
    ...(opts.mediaTimeoutMs !== undefined && { mediaTimeoutMs: opts.mediaTimeoutMs }),
  })
  t.teardown(() => sip.close())
  return { sip, session }
}

async function udp(t: Test, port = 0): Promise<Socket | null> {
  const s = createSocket('udp4')
  const ok = await new Promise<boolean>((resolve) => {
    s.once('error', () => resolve(false))
    s.bind(port, '127.0.0.1', () => resolve(true))
  })
  if (!ok) return null
  t.teardown(() => s.close())
  return s
}

/** True when both ports can be bound (the call that held them let them go). */
async function free(port: number): Promise<boolean> {
  const sockets = [createSocket('udp4'), createSocket('udp4')]
  const bound = await Promise.all(
    sockets.map(
      (s, i) =>
        new Promise<boolean>((resolve) => {
          s.once('error', () => resolve(false))
          s.bind(port + i, '127.0.0.1', () => resolve(true))
        }),
    ),
  )
  for (const s of sockets) s.close()
  return bound.every(Boolean)
}

t.test('an RFC 2543 INVITE never acknowledged: its 200 resent, then a BYE; session, slot and ports freed', async (t) => {
  let opened = 0
  const { sip, session } = await endpoint(t, { opened: () => void opened++ })
  const peer = await udp(t)
  if (peer === null) throw new Error('no socket')
  const inbox = new Inbox<SipMessage>()
  peer.on('message', (bytes) => {
    const r = decodeSipMessage(bytes)
    if (r.ok) inbox.push(r.message)
  })
  const me = `127.0.0.1:${peer.address().port}`
  const sdp = [
    'v=0',
    'o=old 1 1 IN IP4 127.0.0.1',
    's=-',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    'm=audio 4000 RTP/AVP 0',
    'a=rtpmap:0 PCMU/8000',
    '',
  ]
  const body = sdp.join('\r\n')
  // RFC 2543 style: the Via has no branch at all, From and To no tags.
  const invite = Buffer.from(
    [
      `INVITE sip:+14155552671@127.0.0.1:${sip.port} SIP/2.0`,
      `Via: SIP/2.0/UDP ${me}`,
      `From: <sip:+15557650000@${me}>`,
      `To: <sip:+14155552671@127.0.0.1:${sip.port}>`,
      `Call-ID: ${randomBytes(6).toString('hex')}@old.example.net`,
      'CSeq: 1 INVITE',
      `Contact: <sip:old@${me}>`,
      'Content-Type: application/sdp',
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body,
    ].join('\r\n'),
  )
  const send = (bytes: Buffer) => peer.send(bytes, sip.port, '127.0.0.1')
  send(invite)
  send(invite)
  const oks: SipResponse[] = []
  let bye: SipMessage | undefined
  while (bye === undefined) {
    const m = await inbox.next(3_000, 'a 200 or the BYE')
    if (m.kind === 'response' && m.status === 200) oks.push(m)
    else if (m.kind === 'request' && m.method === 'BYE') bye = m
  }
  t.ok(oks.length >= 3, `the 200 was resent while no ACK came (${oks.length} copies)`)
  t.equal(new Set(oks.map((r) => getHeader(r, 'To'))).size, 1, 'every copy is the same 200 (one To tag)')
  t.equal(opened, 1, 'the retransmitted INVITE made no second call')
  if (bye.kind !== 'request') throw new Error('unreachable')
  t.equal(bye.uri, `sip:old@${me}`, 'the BYE goes to the INVITE Contact')
  t.equal(getHeader(bye, 'To'), `<sip:+15557650000@${me}>`, 'to the caller, which had no tag')
  send(encodeSipMessage(buildResponse(bye, 200)))
  t.same(session.ends, ['closed:client_disconnected'], 'the session ends as the peer going away')
  await eventually(async () => (sip.liveCalls === 0 ? true : undefined))
  const port = Number(/m=audio (\d+)/.exec(oks[0]!.body.toString())?.[1])
  t.ok(await eventually(async () => ((await free(port)) ? true : undefined)), `the RTP port ${port} and its RTCP port are free again`)
})

/** A phone in a call with the gateway: INVITE (with `mediaLines` in the offer), 200, ACK. */
async function call(t: Test, sip: SipEndpoint, mediaLines: string[] = []) {
  const phone = await SipCaller.open({ host: '127.0.0.1', port: sip.port })
  t.teardown(() => phone.close())
  phone.invite('+14155552671', { mediaLines })
  const ok = await phone.final()
  t.equal(ok.status, 200)
  phone.ack(ok)
  const ourRtp = Number(/m=audio (\d+)/.exec(ok.body.toString())?.[1])
  return { phone, ok, ourRtp }
}

t.test('a peer that stops sending RTP is hung up: BYE, and the session ends media_timeout', async (t) => {
  const { sip, session } = await endpoint(t, { mediaTimeoutMs: 1000 })
  const { phone } = await call(t, sip)
  await phone.speak(Buffer.alloc(160 * 40, 0x10))
  const bye = await phone.byes.next(4_000, 'BYE once the media stopped')
  t.equal(getHeader(bye, 'Call-ID'), phone.callId)
  t.same(session.ends, ['closed:media_timeout'])
  await eventually(async () => (sip.liveCalls === 0 ? true : undefined))
})

t.test('a held call (a=sendonly) does not time out; taken off hold, silence hangs it up again', async (t) => {
  const { sip, session } = await endpoint(t, { mediaTimeoutMs: 800 })
  const { phone } = await call(t, sip)
  phone.reinvite('sendonly')
  const held = await phone.final()
  t.equal(held.status, 200)
  phone.ackReinvite(held)
  await new Promise((r) => setTimeout(r, 2_000))
  t.equal(phone.byes.items.length, 0, 'no BYE while held, with nothing heard for more than twice the timeout')
  t.same(session.ends, [])
  phone.reinvite('sendrecv')
  const back = await phone.final()
  phone.ackReinvite(back)
  await phone.byes.next(3_000, 'BYE once off hold and silent')
  t.same(session.ends, ['closed:media_timeout'])
})

/** Packets on `socket`, decoded as RTCP (RTP is left out). */
function rtcpOn(socket: Socket): RtcpPacket[][] {
  const got: RtcpPacket[][] = []
  socket.on('message', (bytes) => {
    if (bytes.length >= 2 && bytes[1]! >= 192 && bytes[1]! <= 223) {
      const d = decodeRtcp(bytes)
      got.push(d.kind === 'rtcp' ? [...d.packets] : [])
    }
  })
  return got
}

t.test('our RTCP reaches the peer on its RTP port + 1; the peer RTCP alone keeps the call up', async (t) => {
  const { sip, session } = await endpoint(t, { mediaTimeoutMs: 1000 })
  // A phone whose RTP port + 1 is free, to listen there as an RFC 3550 peer does.
  let phone: SipCaller | undefined
  let rtcp: Socket | null = null
  for (let i = 0; i < 10 && rtcp === null; i++) {
    phone = await SipCaller.open({ host: '127.0.0.1', port: sip.port })
    t.teardown(() => phone?.close())
    rtcp = await udp(t, phone.rtpPort + 1)
  }
  if (phone === undefined || rtcp === null) throw new Error('no RTP/RTCP port pair free')
  const reports = rtcpOn(rtcp)
  phone.invite('+14155552671')
  const ok = await phone.final()
  phone.ack(ok)
  const ourRtp = Number(/m=audio (\d+)/.exec(ok.body.toString())?.[1])
  // Our reports every ~5 s (the first after ~2.5 s); the peer's RR every 300 ms keeps the call alive meanwhile.
  const rr = encodeRtcp([
    { type: 'rr', ssrc: 0x1234, reports: [] },
    { type: 'sdes', chunks: [{ ssrc: 0x1234, items: [{ type: 1, text: 'phone@test' }] }] },
  ])
  const keepAlive = setInterval(() => rtcp?.send(rr, ourRtp + 1, '127.0.0.1'), 300)
  t.teardown(() => clearInterval(keepAlive))
  await eventually(async () => (reports.length > 0 ? true : undefined), 4_000, 'an RTCP report on RTP + 1')
  const first = reports[0]!
  t.ok(first.length >= 2, 'a compound packet')
  t.equal(first[0]?.type, 'sr', 'an SR: we send RTP (silence) all along')
  t.match(first[1], { type: 'sdes', chunks: [{ items: [{ type: 1, text: /^voxgate-/ }] }] }, 'then our CNAME')
  t.same(session.ends, [], 'RTCP alone (no RTP for 2.5 s) kept the call up')
  clearInterval(keepAlive)
  await phone.byes.next(3_000, 'BYE once the RTCP stopped too')
  t.same(session.ends, ['closed:media_timeout'])
  await eventually(async () => (reports.some((r) => r.some((p) => p.type === 'bye')) ? true : undefined), 2_000, 'our RTCP BYE')
})

t.test('a=rtcp-mux offered: answered a=rtcp-mux, and our RTCP comes on the RTP port', async (t) => {
  const { sip } = await endpoint(t, { mediaTimeoutMs: 0 })
  const phone = await SipCaller.open({ host: '127.0.0.1', port: sip.port })
  t.teardown(() => phone.close())
  const reports = rtcpOn(phone.rtp)
  phone.invite('+14155552671', { mediaLines: ['a=rtcp-mux'] })
  const ok = await phone.final()
  phone.ack(ok)
  t.match(ok.body.toString(), /\r\na=rtcp-mux\r\n/, 'the answer accepts multiplexing')
  await eventually(async () => (reports.length > 0 ? true : undefined), 4_000, 'RTCP on the RTP port')
  t.match(reports[0]?.[0]?.type, /^(sr|rr)$/)
})
