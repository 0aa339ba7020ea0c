/**
 * The UAS flows that need the admission in the test's hands, over a real endpoint and the test phone: CANCEL
 * with the admission held so the CANCEL surely comes first (against the gateway's store the admission may finish
 * within one turn of the event loop), a refusal from `open`, and a 200 never acknowledged. The session side is
 * the `SipSessionPort` a transport drives, recorded here.
 */
import t, { type Test } from 'tap'
import { silentLogger } from '../../core/log.js'
import type { EndReason } from '../../core/end-reason.js'
import { SipEndpoint } from '../../transports/sip/endpoint/sip-endpoint.js'
import type { SipAdmission } from '../../transports/sip/calls/sip-admission.js'
import type { SipCallTransport, SipSessionPort } from '../../transports/sip/calls/sip-call-transport.js'
import { getHeader } from '../../transports/sip/message/sip-message.js'
import type { TimerScheduler } from '../../transports/sip/timer-scheduler.js'
import { eventually } from '../helpers/eventually.js'
import { SipCaller } from '../helpers/sip-caller.js'
import { sipRequest, TcpPeer } from '../helpers/sip-wire.js'

const rtpMin = 40_000 + 2 * Math.floor(Math.random() * 5_000)

/** RFC 3261 timers 50 times faster: timer L (64*T1) after 640 ms. */
const fastTimers: TimerScheduler = {
  schedule(ms, fire) {
    const handle = setTimeout(fire, ms / 50)
    return { cancel: () => clearTimeout(handle) }
  },
}

async function endpoint(t: Test, admission: SipAdmission, timers?: TimerScheduler) {
  const sip = await SipEndpoint.start({
    ...(timers !== undefined && { timers }),
    host: '127.0.0.1',
    port: 0,
    publicHost: '127.0.0.1',
    log: silentLogger(),
    admission,
    rtpPorts: { min: rtpMin, max: rtpMin + 20 },
  })
  t.teardown(() => sip.close())
  const phone = await SipCaller.open({ host: '127.0.0.1', port: sip.port })
  t.teardown(() => phone.close())
  return { sip, phone }
}

/** A session that records how it was ended, the caller audio it got and its activity notes. */
function recordedSession(): SipSessionPort & { ends: string[]; frames: Buffer[]; activity: number; reports: string[] } {
  const ends: string[] = []
  const frames: Buffer[] = []
  const reports: string[] = []
  const session = {
    id: 'sess_test',
    isEnded: false,
    ends,
    frames,
    reports,
    activity: 0,
    noteUserActivity: () => void session.activity++,
    input: {
      pushAudio: (chunk: Buffer) => void frames.push(chunk),
      audioWritten: (id: number) => void reports.push(`written:${id}`),
      markPlayed: (id: number) => void reports.push(`played:${id}`),
      dtmf: (digit: string) => void reports.push(`dtmf:${digit}`),
    } as unknown as SipSessionPort['input'],
    end: async (reason: EndReason) => void ends.push(`end:${reason}`),
    transportClosed: async (reason?: EndReason) => void ends.push(`closed:${reason}`),
  }
  return session
}

/** The next three answers, as `status method`. */
async function answers(phone: SipCaller, n: number): Promise<string[]> {
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    const r = await phone.next()
    out.push(`${r.status} ${getHeader(r, 'CSeq')?.split(' ')[1]}`)
    if (r.status === 487) phone.ackError(r)
  }
  return out.sort()
}

t.test('CANCEL while the admission looks the call up: 200, the INVITE 487, no session opened', async (t) => {
  let opened = 0
  let decide: () => void = () => undefined
  const { sip, phone } = await endpoint(
    t,
    () =>
      new Promise((resolve) => {
        decide = () =>
          resolve({
            admit: true,
            open: async () => {
              opened++
              return { admit: true, session: recordedSession() }
            },
          })
      }),
  )
  phone.invite('+14155552671')
  t.equal((await phone.next()).status, 100)
  phone.cancel()
  t.same(await answers(phone, 2), ['200 CANCEL', '487 INVITE'])
  decide()
  await new Promise((r) => setImmediate(r))
  t.equal(opened, 0, 'the session was never opened')
  t.equal(sip.liveCalls, 0)
})

t.test('CANCEL while the session opens: the INVITE gets 487 and the opened session ends as a caller hang-up', async (t) => {
  const session = recordedSession()
  let release: () => void = () => undefined
  const { sip, phone } = await endpoint(t, async () => ({
    admit: true,
    open: () => new Promise((resolve) => (release = () => resolve({ admit: true, session }))),
  }))
  phone.invite('+14155552671')
  t.equal((await phone.next()).status, 100)
  await eventually(async () => (sip.liveCalls === 1 ? true : undefined))
  phone.cancel()
  t.same(await answers(phone, 2), ['200 CANCEL', '487 INVITE'])
  release()
  await eventually(async () => (session.ends.length > 0 ? true : undefined))
  t.same(session.ends, ['end:caller_hangup'])
  t.equal(sip.liveCalls, 0, 'the call and its RTP port are gone')
  await phone.next(300).then(
    (r) => t.fail(`unexpected ${r.status}`),
    () => t.pass('no 200 for the cancelled INVITE'),
  )
})

t.test('a refusal from open reaches the caller with its status and headers', async (t) => {
  const { sip, phone } = await endpoint(t, async () => ({
    admit: true,
    open: async () => ({
      admit: false,
      status: 503,
      reason: 'the gateway is shutting down',
      headers: [{ name: 'Retry-After', value: '30' }],
    }),
  }))
  phone.invite('+14155552671')
  const r = await phone.final()
  t.same([r.status, r.reason, getHeader(r, 'Retry-After')], [503, 'the gateway is shutting down', '30'])
  phone.ackError(r)
  t.equal(sip.liveCalls, 0)
})

t.test('a 200 never acknowledged: resent until timer L, then a BYE, and the session ends', async (t) => {
  const session = recordedSession()
  const { sip, phone } = await endpoint(t, async () => ({ admit: true, open: async () => ({ admit: true, session }) }), fastTimers)
  phone.invite('+14155552671')
  t.equal((await phone.next()).status, 100)
  t.equal((await phone.next()).status, 200)
  t.equal((await phone.next()).status, 200, 'resent on timer G while no ACK comes')
  const bye = await phone.byes.next(3_000, 'BYE after timer L')
  t.equal(getHeader(bye, 'Call-ID'), phone.callId)
  t.match(getHeader(bye, 'From'), /;tag=[0-9a-f]{16}$/, 'From carries our tag')
  t.match(getHeader(bye, 'To'), new RegExp(`;tag=${phone.fromTag}$`), 'To carries the caller tag')
  t.equal(bye.uri, `sip:caller@127.0.0.1:${phone.sipPort}`, 'sent to the INVITE Contact')
  t.same(session.ends, ['closed:client_disconnected'])
  await eventually(async () => (sip.liveCalls === 0 ? true : undefined))
})

t.test('hold and unhold by re-INVITE: answered, the held caller feeds the pipeline silence, timeouts pushed back', async (t) => {
  const session = recordedSession()
  // Fast timers: a 200 whose ACK went astray would come again within 10 ms and show up below.
  const { phone } = await endpoint(t, async () => ({ admit: true, open: async () => ({ admit: true, session }) }), fastTimers)
  phone.invite('+14155552671')
  const ok = await phone.final()
  phone.ack(ok)
  void phone.speak(Buffer.alloc(160 * 8, 0x10))
  await eventually(async () => (session.frames.some((f) => f[0] === 0x10) ? true : undefined))

  phone.reinvite('sendonly')
  const held = await phone.final()
  t.equal(held.status, 200)
  phone.ackReinvite(held)
  t.match(held.body.toString(), /a=recvonly/, 'the answer mirrors the hold')
  t.match(held.body.toString(), /o=\S+ \d+ 2 IN/, 'our SDP version went up')
  t.equal(session.activity, 1, 'the user-silence timeout is pushed back')
  const before = session.frames.length
  void phone.speak(Buffer.alloc(160 * 8, 0x20))
  await eventually(async () => (session.frames.length > before + 6 ? true : undefined))
  t.notOk(
    session.frames.slice(before).some((f) => f.some((b) => b === 0x20)),
    'music on hold reaches the pipeline as silence',
  )

  phone.reinvite('sendrecv')
  const back = await phone.final()
  t.equal(getHeader(back, 'CSeq'), '3 INVITE', 'the hold 200 was not resent after its ACK')
  phone.ackReinvite(back)
  t.match(back.body.toString(), /a=sendrecv/)
  t.equal(session.activity, 2, 'the timeout runs again from the unhold')
  // The 200s stop once their ACKs are in: a retransmission may still cross an ACK on a loaded machine, so what came
  // in the first 50 ms is let go and the next 50 ms (five periods of timer G) must bring nothing.
  await new Promise((r) => setTimeout(r, 50))
  phone.responses.items.length = 0
  await new Promise((r) => setTimeout(r, 50))
  t.equal(phone.responses.items.length, 0, 'no 200 resent after the ACKs (timer G would fire every 10 ms)')
  phone.bye()
  t.equal((await phone.final()).status, 200)
  t.same(session.ends, ['closed:caller_hangup'])
})

t.test('an INVITE without SDP: our offer in the 200, the answer in the ACK, and media both ways from then on', async (t) => {
  const session = recordedSession()
  let transport: SipCallTransport | undefined
  const { phone } = await endpoint(t, async () => ({
    admit: true,
    open: async (tr) => {
      transport = tr
      return { admit: true, session }
    },
  }))
  phone.invite('+14155552671', { sdp: false })
  const ok = await phone.final()
  t.equal(ok.status, 200)
  t.match(ok.body.toString(), /m=audio \d+ RTP\/AVP 0 101 13\r\n/, 'we offer PCMU, telephone-event and comfort noise')
  // The agent speaks before the answer came: it waits, and goes out once the ACK brings the answer.
  transport?.deliver({ type: 'audio', turnId: 't1', chunkId: 1, audio: Buffer.alloc(160 * 5, 0x42), durationMs: 100 })
  phone.ackWithAnswer(ok)
  await eventually(async () => (phone.heard.filter((h) => h.payload[0] === 0x42).length === 5 ? true : undefined))
  t.pass('the agent audio reached the phone after the answer')
  t.same(session.reports, ['written:1', 'played:1'], 'written at its first packet, heard at its last')
  void phone.speak(Buffer.alloc(160 * 6, 0x10))
  await eventually(async () => (session.frames.some((f) => f[0] === 0x10) ? true : undefined))
  t.pass('the caller audio reached the session')
  phone.bye()
  t.equal((await phone.final()).status, 200)
})

t.test('an INVITE without SDP whose ACK brings no answer: the call ends with a BYE', async (t) => {
  const session = recordedSession()
  const { sip, phone } = await endpoint(t, async () => ({ admit: true, open: async () => ({ admit: true, session }) }))
  phone.invite('+14155552671', { sdp: false })
  const ok = await phone.final()
  phone.ack(ok)
  await phone.byes.next(2_000, 'BYE')
  t.same(session.ends, ['closed:error'])
  await eventually(async () => (sip.liveCalls === 0 ? true : undefined))
})

t.test('session timers (RFC 4028): below Min-SE 422; the peer refreshing by UPDATE; no refresh ends the call', async (t) => {
  let opened = 0
  const session = recordedSession()
  const { sip, phone } = await endpoint(
    t,
    async () => ({
      admit: true,
      open: async () => {
        opened++
        return { admit: true, session }
      },
    }),
    fastTimers,
  )
  phone.invite('+14155552671', { extra: ['Session-Expires: 60', 'Supported: timer'] })
  const small = await phone.final()
  t.same([small.status, getHeader(small, 'Min-SE')], [422, '90'])
  phone.ackError(small)
  t.equal(opened, 0, 'refused before the session')

  phone.invite('+14155552671', { extra: ['Session-Expires: 90;refresher=uac', 'Supported: timer'] })
  const ok = await phone.final()
  t.same([getHeader(ok, 'Session-Expires'), getHeader(ok, 'Require')], ['90;refresher=uac', 'timer'])
  phone.ack(ok)
  phone.update(['Session-Expires: 90;refresher=uac', 'Supported: timer'])
  const refreshed = await phone.final()
  t.same([refreshed.status, getHeader(refreshed, 'Session-Expires')], [200, '90;refresher=uac'], 'a refresh by UPDATE')
  t.equal(refreshed.body.length, 0, 'no SDP in the answer to an UPDATE without one')
  // 90 s - 30 s on timers 50 times faster: the BYE comes 1.2 s after the last refresh.
  const bye = await phone.byes.next(3_000, 'BYE when the refresh never comes')
  t.equal(getHeader(bye, 'Call-ID'), phone.callId)
  t.same(session.ends, ['closed:client_disconnected'])
  await eventually(async () => (sip.liveCalls === 0 ? true : undefined))
})

t.test('a call over TCP: the answers and our BYE come on the connection the INVITE came on', async (t) => {
  const session = recordedSession()
  let transport: SipCallTransport | undefined
  const { sip } = await endpoint(t, async () => ({
    admit: true,
    open: async (tr) => {
      transport = tr
      return { admit: true, session }
    },
  }))
  const tcp = await TcpPeer.open(sip.port)
  t.teardown(() => tcp.close())
  const offer = [
    'v=0',
    'o=pbx 1 1 IN IP4 127.0.0.1',
    's=-',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    'm=audio 40000 RTP/AVP 8',
    'a=rtpmap:8 PCMA/8000',
    '',
  ]
  const body = offer.join('\r\n')
  const invite = sipRequest({
    method: 'INVITE',
    transport: 'TCP',
    viaPort: tcp.port,
    callId: 'tcp-call',
    extra: ['Content-Type: application/sdp'],
  })
  tcp.send(
    Buffer.concat([invite.subarray(0, invite.indexOf('Content-Length')), Buffer.from(`Content-Length: ${body.length}\r\n\r\n${body}`)]),
  )
  t.equal((await tcp.next()).status, 100)
  const ok = await tcp.next()
  t.equal(ok.status, 200)
  t.match(ok.body.toString(), /m=audio \d+ RTP\/AVP 8\r\n/, 'PCMA answered')
  t.equal(getHeader(ok, 'Contact'), `<sip:127.0.0.1:${sip.port};transport=tcp>`)
  transport?.close('hangup')
  const bye = await tcp.nextMessage()
  t.same(bye.kind === 'request' ? [bye.method, getHeader(bye, 'Call-ID')] : [], ['BYE', 'tcp-call@pbx.example.net'])
  t.match(getHeader(bye, 'Via'), /^SIP\/2.0\/TCP /)
  await eventually(async () => (sip.liveCalls === 0 ? true : undefined))
})
