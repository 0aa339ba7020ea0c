import t, { type Test } from 'tap'
import { silentLogger } from '../../core/log.js'
import { SipEndpoint } from '../../transports/sip/endpoint/sip-endpoint.js'
import type { SipAdmission } from '../../transports/sip/calls/sip-admission.js'
import { getHeader, type SipRequest } from '../../transports/sip/message/sip-message.js'
import type { TimerScheduler } from '../../transports/sip/timer-scheduler.js'
import { eventually } from '../helpers/eventually.js'
import { newBranch, sipRequest, UdpPeer } from '../helpers/sip-wire.js'

/** RFC 3261 timers 50 times faster: timer G's first 403 retransmission after 10 ms, timer I after 100 ms. */
const fastTimers: TimerScheduler = {
  schedule(ms, fire) {
    const handle = setTimeout(fire, ms / 50)
    return { cancel: () => clearTimeout(handle) }
  },
}

async function endpoint(t: Test, options: { admission?: SipAdmission; timers?: TimerScheduler } = {}) {
  const sip = await SipEndpoint.start({ host: '127.0.0.1', port: 0, publicHost: 'sip.example.com', log: silentLogger(), ...options })
  t.teardown(() => sip.close())
  const peer = await UdpPeer.open({ host: '127.0.0.1', port: sip.port })
  t.teardown(() => peer.close())
  return { sip, peer }
}

t.test('OPTIONS over UDP gets 200 with Allow, Accept and Supported, sent to the Via received/rport', async (t) => {
  const { sip, peer } = await endpoint(t)
  await peer.send(sipRequest({ method: 'OPTIONS', viaHost: 'pbx.example.net', viaPort: 5080 }))
  const res = await peer.next()
  t.equal(res.status, 200)
  t.equal(getHeader(res, 'Allow'), 'INVITE, ACK, CANCEL, BYE, OPTIONS, UPDATE, NOTIFY')
  t.equal(getHeader(res, 'Accept'), 'application/sdp')
  t.equal(getHeader(res, 'Supported'), 'timer')
  t.equal(getHeader(res, 'Contact'), `<sip:sip.example.com:${sip.port}>`)
  t.match(getHeader(res, 'To'), /;tag=[0-9a-f]{16}$/)
  // Section 18.2.1 and RFC 3581: the sent-by was a name, so received is the source address; rport its port.
  t.match(
    getHeader(res, 'Via'),
    new RegExp(`^SIP/2.0/UDP pbx.example.net:5080;branch=z9hG4bK[0-9a-f]+;rport=${peer.port};received=127.0.0.1$`),
  )
})

t.test('a retransmitted OPTIONS gets the same response, handled once', async (t) => {
  const { sip, peer } = await endpoint(t)
  const bytes = sipRequest({ method: 'OPTIONS' })
  await peer.send(bytes)
  const first = await peer.nextRaw()
  await peer.send(bytes)
  const second = await peer.nextRaw()
  t.same(second, first, 'byte for byte: the same To tag, not a second answer')
  t.equal(sip.liveTransactions, 1, 'one server transaction absorbs the copy (timer J keeps it)')
})

t.test('INVITE gets 403, its retransmission the same 403 without a second admission, and the ACK completes it', async (t) => {
  let asked = 0
  const admission: SipAdmission = () => {
    asked++
    return { admit: false, status: 403, reason: 'no SIP trunk for this address' }
  }
  const { sip, peer } = await endpoint(t, { admission, timers: fastTimers })
  const branch = newBranch()
  const invite = sipRequest({ method: 'INVITE', branch, callId: 'call-1' })
  await peer.send(invite)
  const first = await peer.next()
  t.equal(first.status, 403)
  t.equal(first.reason, 'no SIP trunk for this address')
  // Timer G: over UDP the 403 is resent until the ACK comes.
  const resent = await peer.next()
  t.equal(resent.status, 403)
  t.equal(getHeader(resent, 'To'), getHeader(first, 'To'))
  await peer.send(invite)
  const again = await peer.next()
  t.equal(again.status, 403)
  t.equal(getHeader(again, 'To'), getHeader(first, 'To'), 'the same answer, with the same To tag')
  t.equal(asked, 1, 'the retransmitted INVITE was not handled again')
  const toTag = /;tag=([0-9a-f]+)/.exec(getHeader(first, 'To') ?? '')?.[1]
  await peer.send(sipRequest({ method: 'ACK', branch, callId: 'call-1', toTag }))
  await eventually(async () => (sip.liveTransactions === 0 ? true : undefined), 3000, 'the transaction to end after its ACK (timer I)')
  t.equal(asked, 1)
})

t.test('REGISTER 405, BYE 481, unmatched CANCEL 481, unknown method 501, stray ACK dropped', async (t) => {
  const { sip, peer } = await endpoint(t)
  const statusOf = async (method: string, extra: string[] = []) => {
    await peer.send(sipRequest({ method, extra }))
    return peer.next()
  }
  const register = await statusOf('REGISTER', ['Contact: <sip:alice@127.0.0.1:5999>', 'Expires: 3600'])
  t.equal(register.status, 405)
  t.equal(getHeader(register, 'Allow'), 'INVITE, ACK, CANCEL, BYE, OPTIONS, UPDATE, NOTIFY')
  t.equal((await statusOf('BYE')).status, 481)
  t.equal((await statusOf('CANCEL')).status, 481)
  const subscribe = await statusOf('SUBSCRIBE', ['Event: presence'])
  t.equal(subscribe.status, 501)
  t.equal(getHeader(subscribe, 'Allow'), 'INVITE, ACK, CANCEL, BYE, OPTIONS, UPDATE, NOTIFY')
  await peer.send(sipRequest({ method: 'ACK', callId: 'stray' }))
  // Datagrams are handled in order: the OPTIONS answer is the next thing back only if the ACK got none.
  await peer.send(sipRequest({ method: 'OPTIONS', callId: 'after-ack' }))
  const next = await peer.next()
  t.equal(getHeader(next, 'Call-ID'), 'after-ack@pbx.example.net', 'the stray ACK got no answer')
  t.equal(next.status, 200)
  t.equal(sip.dropped.malformed, 0)
})

t.test('a CANCEL for an answered INVITE matches its transaction and gets 200', async (t) => {
  const { peer } = await endpoint(t)
  const branch = newBranch()
  await peer.send(sipRequest({ method: 'INVITE', branch, callId: 'c' }))
  t.equal((await peer.next()).status, 403)
  await peer.send(sipRequest({ method: 'CANCEL', branch, callId: 'c' }))
  const res = await peer.next()
  t.equal(res.status, 200)
  t.equal(getHeader(res, 'CSeq'), '1 CANCEL')
})

t.test('a draining endpoint answers INVITE 503 with Retry-After and OPTIONS 200', async (t) => {
  let asked = 0
  const { sip, peer } = await endpoint(t, {
    admission: () => {
      asked++
      return { admit: false, status: 403, reason: 'never asked' }
    },
  })
  sip.drain()
  t.ok(sip.isDraining)
  await peer.send(sipRequest({ method: 'INVITE' }))
  const invite = await peer.next()
  t.equal(invite.status, 503)
  t.equal(getHeader(invite, 'Retry-After'), '30')
  t.equal(asked, 0, 'no admission while draining')
  await peer.send(sipRequest({ method: 'OPTIONS' }))
  t.equal((await peer.next()).status, 200)
})

t.test('an admission that takes a round trip: 100 Trying first, then its answer; one that throws: 500', async (t) => {
  let seen: { address: string; transport: string; callId: string | undefined } | undefined
  const slow: SipAdmission = async (source, invite: SipRequest) => {
    seen = { address: source.address, transport: source.transport, callId: getHeader(invite, 'Call-ID') }
    await new Promise((r) => setImmediate(r))
    return { admit: false, status: 486, reason: 'Busy Here' }
  }
  const { peer } = await endpoint(t, { admission: slow })
  await peer.send(sipRequest({ method: 'INVITE', callId: 'slow' }))
  t.equal((await peer.next()).status, 100)
  t.equal((await peer.next()).status, 486)
  t.same(seen, { address: '127.0.0.1', transport: 'udp', callId: 'slow@pbx.example.net' })

  const { peer: peer2 } = await endpoint(t, {
    admission: () => {
      throw new Error('store down')
    },
  })
  await peer2.send(sipRequest({ method: 'INVITE' }))
  t.equal((await peer2.next()).status, 500)
})

t.test('an admitted INVITE whose session cannot open gets the refusal open gives, and leaves no call', async (t) => {
  let opened = 0
  const { sip, peer } = await endpoint(t, {
    admission: () => ({
      admit: true,
      open: async () => {
        opened++
        return { admit: false, status: 486, reason: 'concurrent session limit reached' }
      },
    }),
  })
  // Without SDP: our offer would go in the 200 (sip-call-uas.test.ts), but the session is refused first.
  await peer.send(sipRequest({ method: 'INVITE' }))
  const res = await peer.next()
  t.same([res.status, res.reason], [486, 'concurrent session limit reached'])
  t.equal(opened, 1)
  t.equal(sip.liveCalls, 0)
})

t.test('an admission answering a status that is no refusal gets 500; line breaks never reach the wire', async (t) => {
  const { peer } = await endpoint(t, { admission: () => ({ admit: false, status: 200, reason: 'ok' }) })
  await peer.send(sipRequest({ method: 'INVITE' }))
  t.equal((await peer.next()).status, 500)
  const { peer: peer2 } = await endpoint(t, { admission: () => ({ admit: false, status: 486, reason: 'busy\r\nX-Injected: 1' }) })
  await peer2.send(sipRequest({ method: 'INVITE' }))
  const res = await peer2.next()
  t.same([res.status, res.reason, getHeader(res, 'X-Injected')], [486, 'busy X-Injected: 1', undefined])
})
