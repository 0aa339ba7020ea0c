/**
 * A SIP-I/SIP-T INVITE end to end over raw UDP: the RFC 3204 body (SDP beside a binary ISUP IAM) is answered 200
 * with our SDP, by an endpoint whose RTP range ends on an odd port (RTP_PORT_MAX=...9, a common setting), which
 * gives the call an even port whose RTCP neighbour is inside the range.
 */
import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { silentLogger } from '../../core/log.js'
import type { SipSessionPort } from '../../transports/sip/sip-call-transport.js'
import { SipEndpoint } from '../../transports/sip/sip-endpoint.js'
import { getHeader, type SipResponse } from '../../transports/sip/sip-message.js'
import { newBranch, UdpPeer, idleSipSession } from '../helpers/sip-wire.js'

const rfc3204 = readFileSync(new URL('fixtures/multipart/rfc3204-body.bin', import.meta.url))
const rtpMin = 42_000 + 2 * Math.floor(Math.random() * 4_000)

const session = (): SipSessionPort => idleSipSession('sess_multipart')

async function start(t: Test, rtpMax: number) {
  const sip = await SipEndpoint.start({
    host: '127.0.0.1',
    port: 0,
    publicHost: '127.0.0.1',
    log: silentLogger(),
    admission: () => ({ admit: true, open: async () => ({ admit: true, session: session() }) }),
    rtpPorts: { min: rtpMin, max: rtpMax },
  })
  t.teardown(() => sip.close())
  const peer = await UdpPeer.open({ host: '127.0.0.1', port: sip.port })
  t.teardown(() => peer.close())
  return { sip, peer }
}

/** An INVITE from the peer (rport) with `body` of `contentType`. */
function invite(peer: UdpPeer, contentType: string, body: Buffer): Buffer {
  const head = [
    'INVITE sip:+14155552671@127.0.0.1 SIP/2.0',
    `Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=${newBranch()};rport`,
    'Max-Forwards: 70',
    'From: <sip:+13034513355@127.0.0.1>;tag=isup1',
    'To: <sip:+14155552671@127.0.0.1>',
    `Call-ID: ${newBranch()}@carrier.example`,
    'CSeq: 8348 INVITE',
    `Contact: <sip:carrier@127.0.0.1:${peer.port}>`,
    'MIME-Version: 1.0',
    `Content-Type: ${contentType}`,
    `Content-Length: ${body.length}`,
    '',
    '',
  ].join('\r\n')
  return Buffer.concat([Buffer.from(head), body])
}

async function final(peer: UdpPeer): Promise<SipResponse> {
  for (;;) {
    const r = await peer.next()
    if (r.status >= 200) return r
  }
}

t.test('an INVITE with multipart/mixed SDP + ISUP is answered 200 with our SDP, on an even port inside an odd range', async (t) => {
  const rtpMax = rtpMin + 5
  const { peer } = await start(t, rtpMax)
  // RFC 3204's SDP offers PCMU (0), GSM (3) and G723 (4) on MG122.level3.com: PCMU is what we take.
  await peer.send(invite(peer, 'multipart/mixed; boundary=unique-boundary-1', rfc3204))
  const ok = await final(peer)
  t.equal(ok.status, 200)
  t.equal(getHeader(ok, 'Content-Type'), 'application/sdp', 'our answer is plain SDP')
  const port = Number(/^m=audio (\d+) RTP\/AVP 0\b/m.exec(ok.body.toString())?.[1])
  t.ok(port % 2 === 0 && port >= rtpMin && port + 1 <= rtpMax, `RTP on ${port}, RTCP on ${port + 1}, both in ${rtpMin}..${rtpMax}`)
})

t.test('a multipart without an SDP part is an INVITE without an offer: our offer goes in the 200', async (t) => {
  const { peer } = await start(t, rtpMin + 21)
  const isupOnly = Buffer.from('--b1\r\nContent-Type: application/ISUP;version=itu-t92+\r\n\r\n\x01\x00\x49\r\n--b1--\r\n', 'latin1')
  await peer.send(invite(peer, 'multipart/mixed;boundary=b1', isupOnly))
  const ok = await final(peer)
  t.equal(ok.status, 200)
  t.match(ok.body.toString(), /^m=audio \d+ RTP\/AVP 0 .*101/m, 'an offer of ours')
})

t.test('a body we cannot read still gets 415 (naming what we read), a cut multipart 400', async (t) => {
  const { peer } = await start(t, rtpMin + 21)
  await peer.send(invite(peer, 'application/unknownformat', Buffer.from('<audio/>')))
  const unsupported = await final(peer)
  t.equal(unsupported.status, 415)
  t.match(getHeader(unsupported, 'Accept'), /application\/sdp, multipart\/mixed/)
  await peer.send(invite(peer, 'multipart/mixed;boundary=unique-boundary-1', rfc3204.subarray(0, 200)))
  t.equal((await final(peer)).status, 400)
})
