/**
 * Outbound calls from the SIP endpoint to a fake trunk over real UDP sockets: the INVITE is challenged (407) and
 * retried with digest, 180 is progress, the 200 is acknowledged and its answer starts the media (steady RTP
 * reaches the trunk), BYE either way ends the dialog, a busy trunk's 486 is
 * acknowledged and reported, and a call given up while it rings sends CANCEL. `transport=tcp` in the URI puts
 * the call on a TCP connection of its own. A 200 that makes us the session refresher (`refresher=uac`) gets our
 * re-INVITE refresh at half the interval (same SDP, version + 1, ACKed), and a refresh answered 481 our BYE.
 */
import t, { type Test } from 'tap'
import { silentLogger } from '../../core/log.js'
import type { SipCallTransport } from '../../transports/sip/calls/sip-call-transport.js'
import { SipEndpoint } from '../../transports/sip/endpoint/sip-endpoint.js'
import { getHeader, type SipRequest } from '../../transports/sip/message/sip-message.js'
import type { SipDialFailure } from '../../transports/sip/calls/sip-outbound-call.js'
import { eventually } from '../helpers/eventually.js'
import { FakeSipTrunk } from '../fakes/sip-trunk/fake-sip-trunk.js'
import type { TimerScheduler } from '../../transports/sip/timer-scheduler.js'

/** Session-timer lengths (40 s and more) 50 times faster: our refresh due at 45 s comes after 0.9 s. */
const fastSessionTimers: TimerScheduler = {
  schedule(ms, fire) {
    const handle = setTimeout(fire, ms >= 40_000 ? ms / 50 : ms)
    return { cancel: () => clearTimeout(handle) }
  },
}

const credentials = { username: 'voxgate', password: 'trunk-secret' }
const min = 40_000 + 2 * Math.floor(Math.random() * 4_000)

async function setup(t: Test, timers?: TimerScheduler, more: { mediaTimeoutMs?: number; mediaTimeouts?: () => void } = {}) {
  const sip = await SipEndpoint.start({
    ...(timers !== undefined && { timers }),
    ...(more.mediaTimeoutMs !== undefined && { mediaTimeoutMs: more.mediaTimeoutMs }),
    ...(more.mediaTimeouts !== undefined && { metrics: { dropped: () => undefined, mediaTimeout: more.mediaTimeouts } }),
    host: '127.0.0.1',
    port: 0,
    publicHost: '127.0.0.1',
    log: silentLogger(),
    rtpPorts: { min, max: min + 20 },
  })
  t.teardown(() => sip.close())
  const trunk = await FakeSipTrunk.start(credentials)
  t.teardown(() => trunk.close())
  return { sip, trunk }
}

/** Dials and records what the call reports. */
async function dial(sip: SipEndpoint, trunk: FakeSipTrunk, uri = trunk.uri) {
  const seen = {
    progress: [] as number[],
    transport: undefined as SipCallTransport | undefined,
    failed: undefined as SipDialFailure | undefined,
  }
  const handle = await sip.dial(
    { uri, from: '+15550001111', to: '+15552223333', credentials },
    {
      onProgress: (s) => seen.progress.push(s),
      onAnswered: (transport) => {
        seen.transport = transport
      },
      onFailed: (f) => {
        seen.failed = f
      },
    },
  )
  if ('refused' in handle) throw new Error(`refused: ${handle.refused}`)
  return { seen, handle }
}

const next = (trunk: FakeSipTrunk, what: string): Promise<SipRequest> => trunk.requests.next(3_000, what)

t.test('challenged, answered, steady RTP both ways, then the trunk hangs up and we do', async (t) => {
  const { sip, trunk } = await setup(t)
  const { seen, handle } = await dial(sip, trunk)
  const first = await next(trunk, 'the INVITE')
  t.equal(first.method, 'INVITE')
  t.equal(first.uri, `sip:+15552223333@127.0.0.1:${trunk.sip.address().port}`)
  t.match(getHeader(first, 'From'), /^<sip:\+15550001111@127\.0\.0\.1>;tag=[0-9a-f]+$/)
  t.match(first.body.toString(), /m=audio \d+ RTP\/AVP 0 8 101/)
  t.equal(getHeader(first, 'Proxy-Authorization'), undefined)
  t.equal((await next(trunk, 'the ACK of the 407')).method, 'ACK')
  const second = await next(trunk, 'the INVITE with digest')
  t.equal(second.method, 'INVITE')
  t.match(getHeader(second, 'Proxy-Authorization'), /^Digest username="voxgate", realm="trunk.test"/)
  t.equal(getHeader(second, 'CSeq'), '2 INVITE', 'CSeq up by one')
  t.equal(getHeader(second, 'Call-ID'), handle.callId, 'the same Call-ID')
  const ack = await next(trunk, 'the ACK of the 200')
  t.equal(ack.method, 'ACK')
  t.match(getHeader(ack, 'To'), /;tag=/, 'the ACK is in the dialog')
  t.equal(ack.uri, `sip:trunk@127.0.0.1:${trunk.sip.address().port}`, 'sent to the 200 Contact')
  t.equal(getHeader(ack, 'Route'), '<sip:sbc.trunk.test;lr>', "the 200's Record-Route is the route set")
  t.same(seen.progress, [180], '180 reported as progress, 100 not')
  t.ok(seen.transport !== undefined, 'answered')
  await eventually(async () => (trunk.heard.length >= 5 ? true : undefined), 3_000, 'RTP at the trunk')
  t.ok(
    trunk.heard.every((p) => p.payloadType === 0 && p.payload.length === 160),
    'steady PCMU from the gateway while nobody speaks',
  )
  t.equal(sip.liveCalls, 1)

  trunk.reinvite(handle.callId, 'hold')
  const held = await trunk.responses.next(3_000, 'the answer to the hold')
  t.equal(held.status, 200)
  t.match(held.body.toString(), /a=recvonly/, 'hold answered recvonly')
  t.ok(seen.transport!.held, 'the transport knows the call is held')
  trunk.reinvite(handle.callId, 'none')
  const offered = await trunk.responses.next(3_000, 'the answer to a re-INVITE without SDP')
  t.equal(offered.status, 200)
  t.match(offered.body.toString(), /m=audio \d+ RTP\/AVP/, 'a re-INVITE without an offer gets our SDP')

  trunk.hangUp(handle.callId)
  await eventually(async () => (sip.liveCalls === 0 ? true : undefined), 3_000, 'the call to end on the BYE')
  t.pass("the trunk's BYE ends the call")

  const again = await dial(sip, trunk)
  await eventually(async () => (again.seen.transport ? true : undefined), 3_000, 'the second call answered')
  while (trunk.requests.items.length > 0) trunk.requests.items.shift()
  again.seen.transport!.close('hangup')
  let bye: SipRequest
  do bye = await next(trunk, 'our BYE')
  while (bye.method !== 'BYE')
  t.equal(getHeader(bye, 'Call-ID'), again.handle.callId)
  t.equal(getHeader(bye, 'Route'), '<sip:sbc.trunk.test;lr>', 'our BYE follows the route set')
  t.match(getHeader(bye, 'CSeq'), /^3 BYE$/, 'our CSeq space goes on after the INVITE')
  t.equal(sip.liveCalls, 0, 'our BYE ends the call')
})

t.test('a busy trunk: 486 acknowledged and reported, nothing left', async (t) => {
  const { sip, trunk } = await setup(t)
  trunk.mode = 'busy'
  const { seen } = await dial(sip, trunk)
  await eventually(async () => seen.failed, 3_000, 'the failure')
  t.same(seen.failed, { kind: 'rejected', status: 486, reason: 'Busy Here' })
  t.same(
    trunk.log.map((r) => r.method),
    ['INVITE', 'ACK', 'INVITE', 'ACK'],
    'the 407 and the 486 each acknowledged',
  )
  t.equal(sip.liveCalls, 0)
})

t.test('given up while ringing: CANCEL, 487, reported as cancelled', async (t) => {
  const { sip, trunk } = await setup(t)
  trunk.mode = 'never'
  const { seen, handle } = await dial(sip, trunk)
  await eventually(async () => (seen.progress.length > 0 ? true : undefined), 3_000, 'ringing')
  handle.cancel()
  await eventually(async () => seen.failed, 3_000, 'the cancelled call')
  t.same(seen.failed, { kind: 'cancelled' })
  const cancel = trunk.log.find((r) => r.method === 'CANCEL')
  t.ok(cancel !== undefined, 'CANCEL sent')
  t.equal(getHeader(cancel!, 'CSeq'), '2 CANCEL', "the INVITE's CSeq number")
  t.equal(sip.liveCalls, 0)
})

t.test('transport=tcp: the call goes over a connection of its own, BYE included', async (t) => {
  const { sip, trunk } = await setup(t)
  const { seen, handle } = await dial(sip, trunk, trunk.tcpUri)
  await eventually(async () => (seen.transport ? true : undefined), 3_000, 'answered over TCP')
  const invites = trunk.log.filter((r) => r.method === 'INVITE')
  t.equal(invites.length, 2, 'challenged and retried')
  t.match(getHeader(invites[1]!, 'Via'), /^SIP\/2\.0\/TCP /, 'Via says TCP')
  t.match(getHeader(invites[1]!, 'Contact'), /;transport=tcp>$/)
  t.ok(
    trunk.log.some((r) => r.method === 'ACK' && getHeader(r, 'Call-ID') === handle.callId),
    'the 200 acknowledged on the connection',
  )
  trunk.hangUp(handle.callId)
  await eventually(async () => (sip.liveCalls === 0 ? true : undefined), 3_000, "the trunk's BYE over TCP")
  t.pass('the call ended')
})

t.test("the trunk's answers are not rate-limited as a flood would be", async (t) => {
  const sip = await SipEndpoint.start({
    host: '127.0.0.1',
    port: 0,
    publicHost: '127.0.0.1',
    log: silentLogger(),
    rtpPorts: { min: min + 40, max: min + 60 },
    rateLimits: { ratePerSecond: 0.001, burst: 1 },
  })
  t.teardown(() => sip.close())
  const trunk = await FakeSipTrunk.start(credentials)
  t.teardown(() => trunk.close())
  const { seen } = await dial(sip, trunk)
  await eventually(async () => (seen.transport ? true : undefined), 3_000, 'answered through 407, 100, 180 and 200')
  t.equal(sip.dropped.rate_limited, 0, 'no answer dropped')
})

t.test('the 200 makes us the refresher: our re-INVITE at half the interval, ACKed; a 481 to the next brings our BYE', async (t) => {
  const { sip, trunk } = await setup(t, fastSessionTimers)
  trunk.sessionExpires = '90;refresher=uac'
  const { seen, handle } = await dial(sip, trunk)
  const invite = await next(trunk, 'the INVITE')
  t.equal(getHeader(invite, 'Supported'), 'timer', 'our INVITE lets the trunk make us the refresher')
  await eventually(async () => (seen.transport ? true : undefined), 3_000, 'answered')
  let refresh: SipRequest
  do refresh = await next(trunk, 'our refresh')
  while (!(refresh.method === 'INVITE' && /;tag=/.test(getHeader(refresh, 'To') ?? '')))
  t.same([getHeader(refresh, 'Session-Expires'), getHeader(refresh, 'Supported')], ['90;refresher=uac', 'timer'])
  t.equal(getHeader(refresh, 'Call-ID'), handle.callId)
  t.equal(getHeader(refresh, 'Route'), '<sip:sbc.trunk.test;lr>', 'in the dialog, with its route set')
  t.match(refresh.body.toString(), /^o=\S+ \d+ 2 /m, 'our SDP again, version 2')
  const ack = await next(trunk, 'the ACK of its 200')
  t.same([ack.method, getHeader(ack, 'CSeq')], ['ACK', `${getHeader(refresh, 'CSeq')?.split(' ')[0]} ACK`])
  trunk.refreshStatus = 481
  let bye: SipRequest
  do bye = await next(trunk, 'our BYE after the refused refresh')
  while (bye.method !== 'BYE')
  t.equal(getHeader(bye, 'Call-ID'), handle.callId)
  await eventually(async () => (sip.liveCalls === 0 ? true : undefined), 3_000, 'the call to end')
})

t.test('a callee that goes silent (no RTP, no RTCP, no BYE) is hung up after the media timeout', async (t) => {
  let timeouts = 0
  const { sip, trunk } = await setup(t, undefined, { mediaTimeoutMs: 600, mediaTimeouts: () => void timeouts++ })
  const { seen, handle } = await dial(sip, trunk)
  await eventually(async () => (seen.transport ? true : undefined), 3_000, 'the call answered')
  await eventually(async () => (trunk.heard.length >= 5 ? true : undefined), 3_000, 'RTP at the trunk')
  t.equal(timeouts, 0, 'not while the callee sends')
  while (trunk.requests.items.length > 0) trunk.requests.items.shift()
  trunk.stopRtp()
  let bye: SipRequest
  do bye = await next(trunk, 'our BYE after the silence')
  while (bye.method !== 'BYE')
  t.equal(getHeader(bye, 'Call-ID'), handle.callId, 'our BYE ends that call')
  await eventually(async () => (sip.liveCalls === 0 ? true : undefined), 3_000, 'the call to end')
  t.equal(timeouts, 1, 'counted once as a media timeout')
})
