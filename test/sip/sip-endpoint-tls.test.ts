/**
 * SIP over TLS at the endpoint, with a certificate made by openssl at test time: OPTIONS over a real TLS
 * connection gets 200 whose Contact names TLS (`sips:` for a sips: Request-URI), a peer that does not finish a
 * handshake is cut off and the endpoint goes on, the TCP bounds hold on the TLS listener, and an outbound call to
 * a `sips:` trunk goes over TLS when its certificate is trusted (SIP_TLS_CA) and is refused when it is not.
 */
import { connect as netConnect } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import t, { type Test } from 'tap'
import { silentLogger } from '../../core/log.js'
import { SipEndpoint } from '../../transports/sip/endpoint/sip-endpoint.js'
import { getHeader } from '../../transports/sip/message/sip-message.js'
import { DEFAULT_TCP_LIMITS, type SipTcpLimits } from '../../transports/sip/endpoint/sip-tcp-listener.js'
import { eventually } from '../helpers/eventually.js'
import { newBranch, sipRequest, TcpPeer } from '../helpers/sip-wire.js'
import { selfSignedCertificate, type TestCertificate } from '../helpers/tls-cert.js'
import { FakeSipTrunk } from '../fakes/sip-trunk/fake-sip-trunk.js'

const min = 44_000 + 2 * Math.floor(Math.random() * 4_000)

async function endpoint(t: Test, cert: TestCertificate, more: { tcpLimits?: Partial<SipTcpLimits>; tlsCa?: string } = {}) {
  const sip = await SipEndpoint.start({
    host: '127.0.0.1',
    port: 0,
    publicHost: '127.0.0.1',
    log: silentLogger(),
    tls: { port: 0, cert: cert.cert, key: cert.key },
    tcpLimits: { ...DEFAULT_TCP_LIMITS, ...more.tcpLimits },
    rtpPorts: { min, max: min + 20 },
    tlsCa: more.tlsCa,
  })
  t.teardown(() => sip.close())
  return sip
}

/** A TLS client that trusts `cert`, framed like the gateway frames a stream. */
async function tlsPeer(t: Test, port: number, cert: TestCertificate): Promise<TcpPeer> {
  const socket = tlsConnect({ host: '127.0.0.1', port, ca: [cert.cert] })
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve)
    socket.once('error', reject)
  })
  const peer = new TcpPeer(socket)
  t.teardown(() => peer.close())
  return peer
}

t.test('OPTIONS over TLS: 200 on the connection, Contact with transport=tls, or sips: for a sips: URI', async (t) => {
  const cert = selfSignedCertificate(t)
  const sip = await endpoint(t, cert)
  const port = sip.tlsPort
  if (port === undefined) throw new Error('no TLS port')
  t.not(port, sip.port, 'TLS listens on a port of its own')
  const p = await tlsPeer(t, port, cert)
  const bytes = sipRequest({ method: 'OPTIONS', transport: 'TLS', callId: 'tls-one' })
  p.send(bytes.subarray(0, 30))
  p.send(bytes.subarray(30))
  const one = await p.next()
  t.equal(one.status, 200)
  t.equal(getHeader(one, 'Contact'), `<sip:127.0.0.1:${port};transport=tls>`)
  t.match(getHeader(one, 'Via'), /^SIP\/2\.0\/TLS 127\.0\.0\.1:5999;branch=\S+;rport=\d+$/, 'the Via stamped with rport as over TCP')
  const sips = sipRequest({ method: 'OPTIONS', transport: 'TLS', callId: 'tls-two' })
    .toString('latin1')
    .replace('OPTIONS sip:', 'OPTIONS sips:')
  p.send(sips)
  const two = await p.next()
  t.equal(getHeader(two, 'Contact'), `<sips:127.0.0.1:${port}>`, 'RFC 3261 12.1.1: a sips: request gets a sips: Contact')
})

t.test('a peer that never finishes its handshake, or speaks plain SIP to the TLS port, is cut off; TLS goes on', async (t) => {
  const cert = selfSignedCertificate(t)
  const sip = await endpoint(t, cert)
  const plain = netConnect({ host: '127.0.0.1', port: sip.tlsPort ?? 0 })
  plain.on('error', () => undefined)
  await new Promise((resolve) => plain.once('connect', resolve))
  plain.write(sipRequest({ method: 'OPTIONS', transport: 'TCP' }))
  await new Promise((resolve) => plain.once('close', resolve))
  t.pass('plain text on the TLS port closes the connection')
  const p = await tlsPeer(t, sip.tlsPort ?? 0, cert)
  p.send(sipRequest({ method: 'OPTIONS', transport: 'TLS' }))
  t.equal((await p.next()).status, 200, 'the listener still answers')
  t.equal(sip.dropped.internal_error, 0)
})

t.test('the TCP bounds apply on TLS: connections per address, idle time, message size', async (t) => {
  const cert = selfSignedCertificate(t)
  const sip = await endpoint(t, cert, { tcpLimits: { maxConnectionsPerAddress: 1, idleMs: 300 } })
  const first = await tlsPeer(t, sip.tlsPort ?? 0, cert)
  const second = tlsConnect({ host: '127.0.0.1', port: sip.tlsPort ?? 0, ca: [cert.cert] })
  second.on('error', () => undefined)
  await new Promise((resolve) => second.once('close', resolve))
  t.equal(sip.dropped.connection_limit, 1, 'the second connection from the address is refused')
  await first.closed
  t.pass('the idle connection was closed')
  const third = await tlsPeer(t, sip.tlsPort ?? 0, cert)
  third.send(`OPTIONS sip:a@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TLS 127.0.0.1:5999;branch=${newBranch()}\r\nX: ${'a'.repeat(70_000)}`)
  await third.closed
  t.equal(sip.dropped.framing_error, 1, 'a header section over the size limit closes the connection')
})

t.test('an outbound call to a sips: trunk goes over TLS when its certificate is trusted, and not otherwise', async (t) => {
  const trunkCert = selfSignedCertificate(t)
  const ours = selfSignedCertificate(t)
  const credentials = { username: 'voxgate', password: 'trunk-secret' }
  const trunk = await FakeSipTrunk.start(credentials, { cert: trunkCert.cert, key: trunkCert.key })
  t.teardown(() => trunk.close())
  const request = { uri: trunk.tlsUri, from: '+15550001111', to: '+15552223333', credentials }
  const events = (seen: { answered: boolean }) => ({
    onProgress: () => undefined,
    onAnswered: () => {
      seen.answered = true
    },
    onFailed: () => undefined,
  })

  const untrusting = await endpoint(t, ours)
  t.same(await untrusting.dial(request, events({ answered: false })), { refused: 'unreachable' }, 'an unknown CA: no call')
  t.equal(trunk.log.length, 0, 'nothing reached the trunk')

  const trusting = await endpoint(t, ours, { tlsCa: trunkCert.cert })
  const seen = { answered: false }
  const handle = await trusting.dial(request, events(seen))
  if ('refused' in handle) throw new Error(`refused: ${handle.refused}`)
  await eventually(async () => (seen.answered ? true : undefined), 3_000, 'answered over TLS')
  const invites = trunk.log.filter((r) => r.method === 'INVITE')
  t.equal(invites.length, 2, 'challenged and retried on the connection')
  t.match(invites[1]?.uri, /^sips:\+15552223333@127\.0\.0\.1:\d+$/)
  t.match(getHeader(invites[1]!, 'Via'), new RegExp(`^SIP/2\\.0/TLS 127\\.0\\.0\\.1:${trusting.tlsPort};`), 'Via says TLS')
  t.equal(getHeader(invites[1]!, 'Contact'), `<sips:127.0.0.1:${trusting.tlsPort}>`, 'a sips: Contact to a sips: trunk')
  trunk.hangUp(handle.callId)
  await eventually(async () => (trusting.liveCalls === 0 ? true : undefined), 3_000, "the trunk's BYE over TLS")
  t.pass('the call ended')
})
