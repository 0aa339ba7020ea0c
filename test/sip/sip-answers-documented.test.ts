/**
 * The answers docs/reference/sip.md promises for requests that are wrong in form, sent as raw bytes over real sockets:
 * 505 for a wrong version, 513 over the limits, 416 for a Request-URI scheme we do not serve, 400 for a NUL or a
 * control byte in a header and for a header over 8,192 characters; RFC 5626 keep-alives ignored over UDP and
 * answered CRLF over TCP, uncounted; and the drop log line's counts, each reason apart.
 */
import { connect, type Socket } from 'node:net'
import t, { type Test } from 'tap'
import { createLogger, silentLogger } from '../../core/log.js'
import { SipEndpoint, type SipEndpointOptions } from '../../transports/sip/endpoint/sip-endpoint.js'
import { getHeader } from '../../transports/sip/message/sip-message.js'
import { Inbox, sipRequest, UdpPeer } from '../helpers/sip-wire.js'

async function endpoint(t: Test, options: Partial<SipEndpointOptions> = {}) {
  const sip = await SipEndpoint.start({ host: '127.0.0.1', port: 0, publicHost: '127.0.0.1', log: silentLogger(), ...options })
  t.teardown(() => sip.close())
  const peer = await UdpPeer.open({ host: '127.0.0.1', port: sip.port })
  t.teardown(() => peer.close())
  return { sip, peer }
}

/** An OPTIONS from the peer (rport: the answer comes back to it), with `lines` in place of the request line or added. */
function options(peer: UdpPeer, change: { requestLine?: string; extra?: string[] } = {}): Buffer {
  const text = sipRequest({ method: 'OPTIONS', viaPort: peer.port, extra: change.extra }).toString('latin1')
  const bytes = change.requestLine === undefined ? text : text.replace(/^[^\r]*/, change.requestLine)
  return Buffer.from(bytes, 'latin1')
}

t.test('a wrong SIP version gets 505 along its Via; a version in lower case is still 2.0', async (t) => {
  const { peer } = await endpoint(t)
  await peer.send(options(peer, { requestLine: 'OPTIONS sip:+15550001111@127.0.0.1 SIP/3.0' }))
  const res = await peer.next()
  t.equal(res.status, 505)
  t.ok(getHeader(res, 'Call-ID'), 'the answer copies the request as a 505 must')
})

t.test('a request over the header count gets 513; one header over 8,192 characters, a NUL or a BEL gets 400', async (t) => {
  const { sip, peer } = await endpoint(t)
  const many = Array.from({ length: 130 }, (_, i) => `X-Pad-${i}: ${i}`)
  await peer.send(options(peer, { extra: many }))
  t.equal((await peer.next()).status, 513, '130 extra headers')
  for (const [name, extra] of [
    ['a 60 KB Subject', `Subject: ${'a'.repeat(60_000)}`],
    ['a 8,193-character header line', `X-Long: ${'b'.repeat(8_193 - 'X-Long: '.length)}`],
    ['a NUL in a header', 'Subject: hello\u0000world'],
    ['a BEL in a header', 'Subject: ring\u0007'],
    ['a NUL in the Via itself', null],
  ] as const) {
    const bytes =
      extra === null
        ? Buffer.from(options(peer).toString('latin1').replace(';rport', ';rport;x=\u0000'), 'latin1')
        : options(peer, { extra: [extra] })
    await peer.send(bytes)
    if (extra === null) {
      // The Via is the one thing the answer needs: without a sound one there is none.
      await peer.send(options(peer, { extra: ['Subject: marker'] }))
      t.equal((await peer.next()).status, 200, `${name}: nothing, the next request is answered`)
    } else t.equal((await peer.next()).status, 400, name)
  }
  await peer.send(options(peer, { extra: [`X-Ok: ${'c'.repeat(8_192 - 'X-Ok: '.length)}`, 'Subject: "a \\\u0000 quoted NUL"'] }))
  t.equal((await peer.next()).status, 200, 'a line of exactly 8,192 characters and a quoted-pair NUL are fine')
  t.equal(sip.dropped.internal_error, 0)
})

t.test('a Request-URI of another scheme gets 416; sip, sips and tel are served', async (t) => {
  const { peer } = await endpoint(t)
  for (const [uri, status] of [
    ['mailto:someone@example.com', 416],
    ['http://example.com/', 416],
    ['tel:+15550001111', 200],
    ['sips:+15550001111@127.0.0.1', 200],
  ] as const) {
    await peer.send(options(peer, { requestLine: `OPTIONS ${uri} SIP/2.0` }))
    t.equal((await peer.next()).status, status, uri)
  }
  await peer.send(options(peer, { extra: ['Require: 100rel, timer'] }))
  const bad = await peer.next()
  t.equal(bad.status, 420, 'an extension we lack, required')
  t.equal(getHeader(bad, 'Unsupported'), '100rel')
})

t.test('CRLF keep-alives over UDP get nothing and count as nothing', async (t) => {
  const { sip, peer } = await endpoint(t)
  for (const ping of ['\r\n\r\n', '\r\n', '\n', '\r\n\r\n\r\n\r\n']) await peer.send(Buffer.from(ping))
  await peer.send(options(peer))
  t.equal((await peer.next()).status, 200, 'the first answer is the OPTIONS one')
  t.equal(peer.unread, 0)
  t.same(Object.values(sip.dropped), [0, 0, 0, 0, 0, 0], 'no drop of any kind')
})

/** A raw TCP connection and everything it has received. */
async function tcp(t: Test, port: number): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1')
  await new Promise<void>((resolve) => socket.once('connect', resolve))
  t.teardown(() => socket.destroy())
  let text = ''
  socket.on('data', (d) => (text += d.toString('latin1')))
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  return { socket, received: () => text, closed }
}

/** Waits until `predicate` holds of the received text (the 2 s bound only stops a broken test). */
async function until(received: () => string, predicate: (s: string) => boolean, what: string): Promise<string> {
  const inbox = new Inbox<true>()
  const timer = setInterval(() => predicate(received()) && inbox.push(true), 5)
  try {
    await inbox.next(2000, what)
  } finally {
    clearInterval(timer)
  }
  return received()
}

t.test('over TCP a CRLFCRLF ping gets a CRLF pong, split or whole; a lone CRLF gets nothing', async (t) => {
  const { sip } = await endpoint(t)
  const c = await tcp(t, sip.port)
  c.socket.write('\r\n\r\n')
  t.equal(await until(c.received, (s) => s.length >= 2, 'the pong'), '\r\n')
  c.socket.write('\r\n')
  await new Promise((r) => setTimeout(r, 20))
  c.socket.write('\r')
  c.socket.write('\n')
  t.equal(await until(c.received, (s) => s.length >= 4, 'the second pong'), '\r\n\r\n', 'a ping split over three writes')
  c.socket.write('\r\n')
  c.socket.write(sipRequest({ method: 'OPTIONS', transport: 'TCP' }))
  const text = await until(c.received, (s) => s.includes('SIP/2.0 200'), 'the OPTIONS answer')
  t.match(text, /^\r\n\r\nSIP\/2\.0 200 OK\r\n/, 'a lone CRLF is no ping: nothing before the answer')
  t.same(Object.values(sip.dropped), [0, 0, 0, 0, 0, 0])
})

t.test('over TCP a request over 64 KiB gets 513 along its Via, then the connection closes', async (t) => {
  const { sip } = await endpoint(t)
  const c = await tcp(t, sip.port)
  const head = sipRequest({ method: 'OPTIONS', transport: 'TCP' }).toString('latin1').replace('Content-Length: 0', 'Content-Length: 70000')
  c.socket.write(head)
  c.socket.write(Buffer.alloc(70_000, 'x'))
  await c.closed
  t.match(c.received(), /^SIP\/2\.0 513 Message Too Large\r\n/)
  t.equal(sip.dropped.framing_error, 1)
})

t.test('the once-a-minute drop line counts each reason apart', async (t) => {
  const lines: Record<string, unknown>[] = []
  const log = createLogger('info', {}, { write: (line: string) => void lines.push(JSON.parse(line)) })
  let now = 1_000_000
  const { sip, peer } = await endpoint(t, {
    log,
    now: () => now,
    rateLimits: { ratePerSecond: 0.001, burst: 2 },
    tcpLimits: { maxConnections: 10, maxConnectionsPerAddress: 1, idleMs: 10_000, maxWriteBufferBytes: 65_536 },
  })
  for (let i = 0; i < 12; i++) await peer.send(options(peer))
  for (let i = 0; i < 2; i++) t.equal((await peer.next()).status, 200)
  const first = await tcp(t, sip.port)
  t.ok(first)
  await until(
    () => String(sip.dropped.rate_limited),
    (s) => s === '10',
    'the ten drops',
  )
  now += 60_000
  const second = await tcp(t, sip.port)
  await second.closed
  const dropped = lines.filter((l) => l.msg === 'SIP traffic dropped (logged once a minute per source)')
  t.same(
    dropped.map((l) => l.counts),
    [{ rate_limited: 1 }, { rate_limited: 9, connection_limit: 1 }],
    'the first drop at once; the next line a minute later with both reasons and their own counts',
  )
})
