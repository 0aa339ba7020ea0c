import { createSocket } from 'node:dgram'
import t from 'tap'
import { startTestGateway } from '../helpers/gateway.js'
import { testDb } from '../helpers/db.js'
import { freeSipPort, sipRequest, UdpPeer, TcpPeer } from '../helpers/sip-wire.js'
import { getHeader } from '../../transports/sip/message/sip-message.js'

t.test('without SIP_PORT the gateway opens no SIP socket', async (t) => {
  const gw = await startTestGateway()
  t.teardown(() => gw.close())
  t.equal(gw.gateway.sip, undefined)
})

t.test(
  'with SIP_PORT the gateway answers OPTIONS, refuses an INVITE from no trunk 403, drains to 503 and frees the port on close',
  async (t) => {
    const port = await freeSipPort()
    const gw = await startTestGateway({ SIP_PORT: String(port), SIP_HOST: '127.0.0.1', SIP_PUBLIC_HOST: 'sip.example.com' })
    let closed = false
    t.teardown(() => (closed ? undefined : gw.close()))
    t.equal(gw.gateway.sip?.port, port)
    const udp = await UdpPeer.open({ host: '127.0.0.1', port })
    t.teardown(() => udp.close())

    await udp.send(sipRequest({ method: 'OPTIONS' }))
    const options = await udp.next()
    t.equal(options.status, 200)
    t.equal(getHeader(options, 'Contact'), `<sip:sip.example.com:${port}>`)
    const tcp = await TcpPeer.open(port)
    t.teardown(() => tcp.close())
    tcp.send(sipRequest({ method: 'OPTIONS', transport: 'TCP' }))
    t.equal((await tcp.next()).status, 200, 'TCP too')

    await udp.send(sipRequest({ method: 'INVITE' }))
    // The admission asks the store for trunks: 100 Trying first, then the refusal.
    t.equal((await udp.next()).status, 100)
    const refused = await udp.next()
    t.same([refused.status, refused.reason], [403, 'no SIP trunk for this address'])
    const sessions = await gw.store.db.selectFrom('sessions').select('id').execute()
    t.equal(sessions.length, 0, 'no session was created')

    await udp.send(sipRequest({ method: 'OPTIONS', userAgent: 'friendly-scanner' }))
    await udp.send(sipRequest({ method: 'OPTIONS', callId: 'after-scanner' }))
    t.equal(getHeader(await udp.next(), 'Call-ID'), 'after-scanner@pbx.example.net', 'the scanner got nothing')
    const metrics = await gw.request('GET', '/metrics', { key: null })
    t.match(metrics.text, /voxgate_sip_dropped_total\{reason="scanner"\} 1/)

    // The gateway drains (SIGTERM): readiness says 503, and so does SIP for new calls; health checks still pass.
    gw.gateway.sessions.drain()
    t.equal((await gw.request('GET', '/readyz', { key: null })).status, 503)
    await udp.send(sipRequest({ method: 'INVITE' }))
    const draining = await udp.next()
    t.equal(draining.status, 503)
    t.equal(getHeader(draining, 'Retry-After'), '30')
    await udp.send(sipRequest({ method: 'OPTIONS' }))
    t.equal((await udp.next()).status, 200)

    closed = true
    await gw.close()
    await tcp.closed
    const again = createSocket('udp4')
    await new Promise<void>((resolve, reject) => {
      again.once('error', reject)
      again.bind(port, '127.0.0.1', resolve)
    })
    again.close()
    t.pass('the UDP port is free again after close')
  },
)

t.test('a SIP port already taken stops the gateway from starting with the bind error', async (t) => {
  const port = await freeSipPort()
  const squatter = createSocket('udp4')
  await new Promise<void>((resolve) => squatter.bind(port, '127.0.0.1', resolve))
  t.teardown(() => squatter.close())
  const db = await testDb()
  t.teardown(() => db.cleanup())
  await t.rejects(startTestGateway({ SIP_PORT: String(port), SIP_HOST: '127.0.0.1' }, { db }), { code: 'EADDRINUSE' })
})
