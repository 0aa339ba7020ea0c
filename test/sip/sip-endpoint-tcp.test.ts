import t, { type Test } from 'tap'
import { silentLogger } from '../../core/log.js'
import { SipEndpoint } from '../../transports/sip/endpoint/sip-endpoint.js'
import { DEFAULT_TCP_LIMITS, type SipTcpLimits } from '../../transports/sip/endpoint/sip-tcp-listener.js'
import { getHeader } from '../../transports/sip/message/sip-message.js'
import { eventually } from '../helpers/eventually.js'
import { newBranch, sipRequest, TcpPeer } from '../helpers/sip-wire.js'

async function endpoint(t: Test, tcpLimits: Partial<SipTcpLimits> = {}) {
  const sip = await SipEndpoint.start({
    host: '127.0.0.1',
    port: 0,
    publicHost: '127.0.0.1',
    log: silentLogger(),
    tcpLimits: { ...DEFAULT_TCP_LIMITS, ...tcpLimits },
  })
  t.teardown(() => sip.close())
  return sip
}

async function peer(t: Test, port: number): Promise<TcpPeer> {
  const p = await TcpPeer.open(port)
  t.teardown(() => p.close())
  return p
}

t.test('OPTIONS over TCP gets 200 on the same connection, split or batched', async (t) => {
  const sip = await endpoint(t)
  const p = await peer(t, sip.port)
  const bytes = sipRequest({ method: 'OPTIONS', transport: 'TCP', callId: 'one' })
  // One message cut in three writes, then two in one write: the framer reassembles and splits.
  p.send(bytes.subarray(0, 10))
  p.send(bytes.subarray(10, 100))
  p.send(bytes.subarray(100))
  const first = await p.next()
  t.equal(first.status, 200)
  t.equal(getHeader(first, 'Contact'), `<sip:127.0.0.1:${sip.port};transport=tcp>`)
  p.send(
    Buffer.concat([
      Buffer.from('\r\n\r\n'),
      sipRequest({ method: 'OPTIONS', transport: 'TCP', callId: 'two' }),
      sipRequest({ method: 'REGISTER', transport: 'TCP', callId: 'three' }),
    ]),
  )
  const two = await p.next()
  const three = await p.next()
  t.same([getHeader(two, 'Call-ID'), two.status], ['two@pbx.example.net', 200])
  t.same([getHeader(three, 'Call-ID'), three.status], ['three@pbx.example.net', 405])
})

t.test('INVITE over TCP gets 403 once (no retransmissions on a reliable transport) and the ACK ends it', async (t) => {
  const sip = await endpoint(t)
  const p = await peer(t, sip.port)
  const branch = newBranch()
  p.send(sipRequest({ method: 'INVITE', transport: 'TCP', branch, callId: 'x' }))
  const res = await p.next()
  t.equal(res.status, 403)
  const toTag = /;tag=([0-9a-f]+)/.exec(getHeader(res, 'To') ?? '')?.[1]
  p.send(sipRequest({ method: 'ACK', transport: 'TCP', branch, callId: 'x', toTag }))
  // Timer I is zero over TCP: the transaction ends right after the ACK.
  await eventually(async () => (sip.liveTransactions === 0 ? true : undefined), 2000, 'the INVITE transaction to end')
  t.pass('ended')
})

t.test('a request that frames but does not decode gets 400 and the connection stays', async (t) => {
  const sip = await endpoint(t)
  const p = await peer(t, sip.port)
  const bad = sipRequest({ method: 'OPTIONS', transport: 'TCP' })
    .toString()
    .replace(/^CSeq: 1 OPTIONS/m, 'CSeq: 1 INVITE')
  p.send(bad)
  t.equal((await p.next()).status, 400)
  p.send(sipRequest({ method: 'OPTIONS', transport: 'TCP' }))
  t.equal((await p.next()).status, 200)
})

t.test('a framing error closes the connection; a 70 KB message too; others are still served', async (t) => {
  const sip = await endpoint(t)
  const p = await peer(t, sip.port)
  p.send('OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:5999;branch=z9hG4bKa\r\nContent-Length: lots\r\n\r\n')
  await p.closed
  const big = await peer(t, sip.port)
  big.send(`OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nX-Pad: ${'a'.repeat(70 * 1024)}`)
  await big.closed
  t.equal(sip.dropped.framing_error, 2)
  const p2 = await peer(t, sip.port)
  p2.send(sipRequest({ method: 'OPTIONS', transport: 'TCP' }))
  t.equal((await p2.next()).status, 200)
})

t.test('an idle connection is closed; connections per address are bounded', async (t) => {
  const sip = await endpoint(t, { idleMs: 100, maxConnectionsPerAddress: 2 })
  const idle = await peer(t, sip.port)
  await idle.closed
  t.pass('the idle connection was closed by the endpoint')
  const a = await peer(t, sip.port)
  const b = await peer(t, sip.port)
  const c = await peer(t, sip.port)
  await c.closed
  t.equal(sip.dropped.connection_limit, 1)
  a.send(sipRequest({ method: 'OPTIONS', transport: 'TCP' }))
  b.send(sipRequest({ method: 'OPTIONS', transport: 'TCP' }))
  t.equal((await a.next()).status, 200)
  t.equal((await b.next()).status, 200)
})
