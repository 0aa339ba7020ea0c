/**
 * A SIP-I/SIP-T INVITE end to end over raw UDP: the RFC 3204 body (SDP beside a binary ISUP IAM) is answered 200
 * with our SDP, by an endpoint whose RTP range ends on an odd port (RTP_PORT_MAX=...9, a common setting), which
 * gives the call an even port whose RTCP neighbour is inside the range. Inside the dialog too: a re-INVITE whose
 * offer is a multipart's SDP part is answered, and an ACK whose answer is one starts our RTP where it says.
 */
import { createSocket } from 'node:dgram'
import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { silentLogger } from '../../core/log.js'
import type { SipSessionPort } from '../../transports/sip/calls/sip-call-transport.js'
import { SipEndpoint } from '../../transports/sip/endpoint/sip-endpoint.js'
import { getHeader, type SipResponse } from '../../transports/sip/message/sip-message.js'
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

/** The dialog a request belongs to: its Call-ID, and the To tag once our 200 gave one. */
interface Dialog {
  readonly callId: string
  readonly toTag?: string | undefined
}

/** An INVITE (or, with `method` and `cseq`, another request of the dialog) from the peer (rport) with `body`. */
function invite(
  peer: UdpPeer,
  contentType: string,
  body: Buffer,
  dialog: Dialog = { callId: `${newBranch()}@carrier.example` },
  method = 'INVITE',
  cseq = 8348,
): Buffer {
  const head = [
    `${method} sip:+14155552671@127.0.0.1 SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=${newBranch()};rport`,
    'Max-Forwards: 70',
    'From: <sip:+13034513355@127.0.0.1>;tag=isup1',
    `To: <sip:+14155552671@127.0.0.1>${dialog.toTag === undefined ? '' : `;tag=${dialog.toTag}`}`,
    `Call-ID: ${dialog.callId}`,
    `CSeq: ${cseq} ${method}`,
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

/** RFC 3204's body with another SDP in its SDP part (the ISUP part kept as it is). */
function withSdp(sdp: string): Buffer {
  const text = rfc3204.toString('latin1')
  const start = text.indexOf('v=0')
  const end = text.indexOf('\r\n\r\n--unique-boundary-1', start)
  return Buffer.concat([rfc3204.subarray(0, start), Buffer.from(sdp.trimEnd()), rfc3204.subarray(end)])
}

/**
 * A multipart whose first part is an early-session SDP (RFC 3959: not the session's) naming `decoy`, and whose
 * second is the session's SDP: only a reader that honours Content-Disposition takes the second.
 */
function earlyThenSession(decoy: string, session: string): Buffer {
  return Buffer.from(
    [
      '--b2',
      'Content-Type: application/sdp',
      'Content-Disposition: early-session',
      '',
      decoy.trimEnd(),
      '--b2',
      'Content-Type: application/sdp',
      '',
      session.trimEnd(),
      '--b2--',
      '',
    ].join('\r\n'),
  )
}

const sdp = (port: number, direction: string) =>
  ['v=0', 'o=carrier 1 2 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${port} RTP/AVP 0`, `a=${direction}`, ''].join(
    '\r\n',
  )

async function udp(t: Test) {
  const socket = createSocket('udp4')
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  t.teardown(() => socket.close())
  const heard = new Promise<Buffer>((resolve) => socket.once('message', resolve))
  return { port: socket.address().port, heard: () => Promise.race([heard, new Promise<undefined>((r) => setTimeout(r, 3_000, undefined))]) }
}

t.test('in the dialog: a multipart re-INVITE offer is answered, a multipart ACK answer is used', async (t) => {
  const { peer } = await start(t, rtpMin + 41)
  const decoy = await udp(t)
  const rtp = await udp(t)

  // A late offer: the INVITE's multipart has no SDP; our offer comes in the 200, the answer in a multipart ACK.
  const dialog = { callId: `${newBranch()}@carrier.example` }
  const isupOnly = Buffer.from('--b1\r\nContent-Type: application/ISUP;version=itu-t92+\r\n\r\n\x01\x00\x49\r\n--b1--\r\n', 'latin1')
  await peer.send(invite(peer, 'multipart/mixed;boundary=b1', isupOnly, dialog))
  const ok = await final(peer)
  t.equal(ok.status, 200)
  const inDialog = { ...dialog, toTag: /;tag=([^;\s]+)/.exec(getHeader(ok, 'To') ?? '')?.[1] }
  t.ok(inDialog.toTag, 'the 200 gives our tag')
  const answer = earlyThenSession(sdp(decoy.port, 'sendrecv'), sdp(rtp.port, 'sendrecv'))
  await peer.send(invite(peer, 'multipart/alternative;boundary=b2', answer, inDialog, 'ACK'))
  const packet = await rtp.heard()
  t.ok(packet !== undefined && packet[0]! >> 6 === 2, "our RTP goes where the ACK's session part says")
  t.equal(await decoy.heard(), undefined, 'nothing goes where the early-session part says')

  // Hold by re-INVITE, the offer in the SDP part beside an ISUP part.
  await peer.send(invite(peer, 'multipart/mixed; boundary=unique-boundary-1', withSdp(sdp(rtp.port, 'sendonly')), inDialog, 'INVITE', 8349))
  const held = await final(peer)
  t.equal(held.status, 200, 'the multipart re-INVITE is answered, not refused 488')
  t.match(held.body.toString(), /^a=recvonly\r?$/m, 'the answer takes the hold')
})
