import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { silentLogger } from '../../core/log.js'
import type { SipDropReason } from '../../transports/sip/endpoint/sip-drop-counter.js'
import { SipEndpoint, type SipEndpointOptions } from '../../transports/sip/endpoint/sip-endpoint.js'
import { eventually } from '../helpers/eventually.js'
import { sipRequest, UdpPeer } from '../helpers/sip-wire.js'

const RFC4475 = fileURLToPath(new URL('./fixtures/rfc4475/', import.meta.url))

async function endpoint(t: Test, options: Partial<SipEndpointOptions> = {}) {
  const sip = await SipEndpoint.start({ host: '127.0.0.1', port: 0, publicHost: '127.0.0.1', log: silentLogger(), ...options })
  t.teardown(() => sip.close())
  const peer = await UdpPeer.open({ host: '127.0.0.1', port: sip.port })
  t.teardown(() => peer.close())
  return { sip, peer }
}

/**
 * Sends `bytes`, then an OPTIONS marker, and returns the statuses of what came back before the marker's 200.
 * Datagrams on one socket are handled in order, so the marker's answer comes after any answer to `bytes`. The
 * answers are read by their status line only: a 400 copies what it could of a broken request, which may itself
 * be broken (a bad Via, no Call-ID).
 */
async function answersTo(peer: UdpPeer, bytes: Buffer, marker: string): Promise<number[]> {
  await peer.send(bytes)
  await peer.send(sipRequest({ method: 'OPTIONS', callId: marker }))
  const statuses: number[] = []
  for (;;) {
    const text = (await peer.nextRaw()).toString('latin1')
    const status = /^SIP\/2\.0 (\d{3}) /.exec(text)
    if (status === null) throw new Error(`not a response: ${JSON.stringify(text.slice(0, 60))}`)
    if (text.includes(`\r\nCall-ID: ${marker}@pbx.example.net\r\n`)) return statuses
    statuses.push(Number(status[1]))
  }
}

t.test('garbage and the RFC 4475 invalid messages get 400/505/513 or nothing, and nothing leaks', async (t) => {
  const { sip, peer } = await endpoint(t, { rateLimits: { ratePerSecond: 1000, burst: 1000 } })
  const inputs: [string, Buffer][] = [
    ['random bytes', Buffer.from([0, 1, 2, 255, 254, 13, 10, 13, 10, 7])],
    ['an empty datagram', Buffer.alloc(0)],
    ['CRLF keep-alive', Buffer.from('\r\n\r\n')],
    ['a response nobody asked for', Buffer.from('SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 127.0.0.1;branch=z9hG4bKx\r\n\r\n')],
    ['headers only, no blank line', Buffer.from('OPTIONS sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP 1.2.3.4;branch=z9hG4bKq')],
  ]
  for (const name of readdirSync(RFC4475)
    .filter((n) => n.endsWith('.dat'))
    .sort())
    inputs.push([`RFC 4475 ${name}`, readFileSync(`${RFC4475}${name}`)])
  let i = 0
  for (const [name, bytes] of inputs) {
    const statuses = await answersTo(peer, bytes, `marker-${i++}`)
    t.ok(
      statuses.every((s) => [200, 400, 403, 405, 481, 501, 505, 513].includes(s)),
      `${name}: ${statuses.join(', ') || 'no answer'}`,
    )
  }
  t.equal(sip.dropped.internal_error, 0, 'nothing threw inside a socket handler')
  t.ok(sip.dropped.malformed >= 10, 'the invalid ones were counted')
})

t.test('the largest datagram gets 400 or nothing; a 70 KB one cannot even be sent over UDP', async (t) => {
  const { sip, peer } = await endpoint(t)
  const head = 'OPTIONS sip:a@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5999;branch=z9hG4bKbig;rport\r\nX-Pad '
  // 65,507 bytes: the most an IPv4 UDP datagram carries. The header line has no colon: a 400.
  const largest = Buffer.concat([Buffer.from(head), Buffer.alloc(65_507 - head.length - 4, 'a'), Buffer.from('\r\n\r\n')])
  const statuses = await answersTo(peer, largest, 'after-largest')
  t.ok(
    statuses.every((s) => s === 400 || s === 513),
    `answers: ${statuses.join(', ') || 'none'}`,
  )
  await t.rejects(peer.send(Buffer.alloc(70 * 1024, 'a')), { code: 'EMSGSIZE' }, 'the kernel refuses it before it reaches the gateway')
  t.equal(sip.dropped.internal_error, 0)
})

t.test('2,000 mutated INVITEs and OPTIONS never throw and leave no transaction behind them', async (t) => {
  const fast = {
    schedule(ms: number, fire: () => void) {
      const handle = setTimeout(fire, ms / 100)
      return { cancel: () => clearTimeout(handle) }
    },
  }
  const { sip, peer } = await endpoint(t, { rateLimits: { ratePerSecond: 100_000, burst: 100_000 }, timers: fast })
  let seed = 42
  const random = (n: number): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
    return seed % n
  }
  // In rounds of 50, each closed by a marker, so neither side's socket buffer overflows and drops the marker.
  for (let round = 0; round < 40; round++) {
    const batch: Buffer[] = []
    for (let i = 0; i < 50; i++) {
      const bytes = Buffer.from(sipRequest({ method: i % 2 ? 'INVITE' : 'OPTIONS', extra: ['Contact: <sip:a@127.0.0.1:5999>'] }))
      for (let k = 0; k < 1 + random(4); k++) bytes[random(bytes.length)] = random(256)
      batch.push(random(5) === 0 ? bytes.subarray(0, random(bytes.length)) : bytes)
    }
    for (const bytes of batch.slice(0, -1)) await peer.send(bytes)
    const statuses = await answersTo(peer, batch.at(-1)!, `round-${round}`)
    if (!statuses.every((s) => [100, 200, 400, 403, 505, 513].includes(s))) t.fail(`round ${round}: ${statuses.join(', ')}`)
  }
  t.equal(sip.dropped.internal_error, 0, 'nothing threw')
  // Every transaction ends on its timers (here 100 times faster): nothing is kept for a message that failed.
  await eventually(async () => (sip.liveTransactions === 0 ? true : undefined), 5000, 'every transaction to end')
  t.equal(sip.liveTransactions, 0)
})

t.test('a scanner User-Agent gets nothing, and the drop is counted', async (t) => {
  const counted: SipDropReason[] = []
  const { sip, peer } = await endpoint(t, { metrics: { dropped: (reason) => counted.push(reason) } })
  for (const [i, ua] of ['friendly-scanner', 'sipvicious 0.3.4', 'sipcli/v1.8', 'VaxSIPUserAgent/3.1'].entries()) {
    const statuses = await answersTo(peer, sipRequest({ method: i % 2 ? 'INVITE' : 'OPTIONS', userAgent: ua }), `after-${i}`)
    t.same(statuses, [], `${ua}: no answer`)
  }
  t.equal(sip.dropped.scanner, 4)
  t.same(counted, ['scanner', 'scanner', 'scanner', 'scanner'])
  t.same(await answersTo(peer, sipRequest({ method: 'OPTIONS', userAgent: 'Asterisk PBX 20.5.0' }), 'pbx'), [200], 'a PBX is answered')
})

t.test('a flood from one source is cut while another source still gets answers', async (t) => {
  const { sip, peer } = await endpoint(t, { rateLimits: { ratePerSecond: 1, burst: 10 } })
  const other = await UdpPeer.open({ host: '127.0.0.1', port: sip.port }, '127.0.0.2')
  t.teardown(() => other.close())
  for (let i = 0; i < 40; i++) await peer.send(sipRequest({ method: 'OPTIONS', callId: `flood-${i}` }))
  await other.send(sipRequest({ method: 'OPTIONS', callId: 'other' }))
  const res = await other.next()
  t.equal(res.status, 200, 'the other address is answered')
  // The flood's datagrams were all handled before the other source's: the answers are on their way or here.
  const answered = 40 - sip.dropped.rate_limited
  for (let i = 0; i < answered; i++) t.equal((await peer.next()).status, 200)
  t.ok(sip.dropped.rate_limited >= 29, `${sip.dropped.rate_limited} of 40 dropped (burst 10, 1/s)`)
  t.ok(answered >= 10 && answered <= 11, `${answered} answered`)
})
