/**
 * Private targets are refused by default whatever their spelling: loopback, RFC 1918, carrier-grade NAT,
 * unique-local IPv6, IPv6 carrying an IPv4 address, localhost names; the URL parser's canonical form is what the
 * policy sees (2130706433, 0x7f000001, 0177.0.0.1, 127.1), when configured and when connecting. EGRESS_ALLOW_CIDRS
 * lets a range through (never to the gateway itself); ALLOW_INSECURE_WEBHOOKS lets loopback through, nothing else. A
 * name that resolved to a public address once and to loopback when connecting (DNS rebinding) gets no connection.
 */
import t from 'tap'
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import type { LookupAddress } from 'node:dns'
import { EgressPolicy } from '../../gateway/webhooks/egress-policy.js'
import { egressFetch, egressRefusalOf, type EgressLookup } from '../../gateway/webhooks/egress-fetch.js'
import { WebhookAgentStep } from '../../pipeline/agent/webhook-agent.js'
import { context, events, fastOptions, MESSAGE, replyOf, SECRET } from '../agent/agent-helpers.js'

/** Every spelling of 127.0.0.1 the URL parser turns into it, and IPv6 ones carrying it. */
const LOOPBACK_SPELLINGS = [
  '127.0.0.1',
  '2130706433',
  '0x7f000001',
  '0177.0.0.1',
  '127.1',
  '[::1]',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
]
const LOCALHOST_NAMES = ['localhost', 'LOCALHOST', 'localhost.', 'api.localhost', 'api.localhost.']
const PRIVATE = [
  ['10.0.0.1', /RFC 1918/],
  ['172.16.5.4', /RFC 1918/],
  ['172.31.255.255', /RFC 1918/],
  ['192.168.1.1', /RFC 1918/],
  ['100.64.0.1', /carrier-grade NAT/],
  ['[fc00::1]', /unique-local/],
  ['[fd12:3456::1]', /unique-local/],
  ['[::ffff:10.0.0.1]', /10\.0\.0\.1 is a private network/],
  ['[::ffff:a00:1]', /10\.0\.0\.1 is a private network/],
  ['[::10.0.0.1]', /10\.0\.0\.1 is a private network/],
  ['[64:ff9b::10.0.0.1]', /10\.0\.0\.1 is a private network/],
  ['[::ffff:169.254.169.254]', /link-local/],
] as const

const policy = (o: Partial<ConstructorParameters<typeof EgressPolicy>[0]> = {}) =>
  new EgressPolicy({ ownPort: 3000, publicUrl: 'https://voice.example.com', selfPathPrefixes: ['/tunnel/'], localAddresses: [], ...o })

t.test('by default every spelling of loopback, and every private range, is refused at configuration time', async (t) => {
  const p = policy()
  for (const host of LOOPBACK_SPELLINGS) t.match(p.urlRefusal(`https://${host}/agent`), /loopback/, host)
  for (const host of LOCALHOST_NAMES) t.match(p.urlRefusal(`https://${host}:8443/agent`), /loopback/, host)
  for (const [host, why] of PRIVATE) t.match(p.urlRefusal(`https://${host}/agent`), why, host)
  t.equal(p.urlRefusal('https://93.184.216.34/agent'), undefined, 'a public address')
  t.equal(p.urlRefusal('https://[::ffff:93.184.216.34]/agent'), undefined, 'a public address, mapped')
  t.equal(p.urlRefusal('https://172.32.0.1/agent'), undefined, 'just past 172.16.0.0/12')
  t.equal(p.urlRefusal('https://backend.example.com/agent'), undefined, 'a name: checked when connecting')
  t.equal(p.urlRefusal('https://voice.example.com/tunnel/tun_1/api/agent'), undefined, 'the tunnel relay')
})

t.test('EGRESS_ALLOW_CIDRS lets a private range through; never to the gateway itself', async (t) => {
  const p = policy({ allowCidrs: ['10.0.0.0/8', 'fc00::/7'], localAddresses: ['10.1.2.3'] })
  t.equal(p.urlRefusal('https://10.0.0.1/agent'), undefined)
  t.equal(p.urlRefusal('https://[::ffff:10.0.0.1]/agent'), undefined, 'mapped: the same address')
  t.equal(p.urlRefusal('https://[fd00::1]/agent'), undefined)
  t.match(p.urlRefusal('https://192.168.1.1/agent'), /RFC 1918/, 'another range still refused')
  t.match(p.urlRefusal('https://127.0.0.1/agent'), /loopback/, 'loopback still refused')
  t.match(p.addressRefusal('10.1.2.3', 3000), /the gateway itself/, "the gateway's own address and port, past the allow list")
  t.equal(p.addressRefusal('10.1.2.3', 3000, true), undefined, 'its tunnel paths')
})

t.test('ALLOW_INSECURE_WEBHOOKS lets loopback through, and nothing else private', async (t) => {
  const p = policy({ allowLoopback: true, localAddresses: ['127.0.0.1'] })
  for (const host of LOOPBACK_SPELLINGS) t.equal(p.urlRefusal(`https://${host}:8080/agent`), undefined, host)
  for (const host of LOCALHOST_NAMES) t.equal(p.urlRefusal(`http://${host}:8080/agent`), undefined, host)
  for (const [host, why] of PRIVATE) t.match(p.urlRefusal(`https://${host}/agent`), why, host)
  t.match(p.urlRefusal('https://10.0.0.1/agent'), /RFC 1918/)
  t.match(p.urlRefusal('http://localhost:3000/v1/agents'), /the gateway itself/, 'still not the gateway')
  t.equal(p.urlRefusal('http://localhost:3000/tunnel/tun_1/api/agent'), undefined, 'its tunnel paths')
})

t.test('isPrivate: loopback and private ranges whatever the allow lists; not a public address', async (t) => {
  const p = policy({ allowLoopback: true, allowCidrs: ['10.0.0.0/8'], localAddresses: ['203.0.113.9'] })
  for (const ip of ['127.0.0.1', '::1', '10.0.0.1', '::ffff:7f00:1', '100.64.0.1', 'fd00::1', '203.0.113.9']) t.ok(p.isPrivate(ip), ip)
  t.notOk(p.isPrivate('93.184.216.34'))
  t.notOk(p.urlIsPrivate(new URL('https://voice.example.com/tunnel/tun_1/api/agent')), 'the tunnel relay reaches a CLI')
  t.ok(p.urlIsPrivate(new URL('http://api.localhost:8080/agent')))
})

/** A TCP server counting connections (a byte reaching it would need one). */
async function counting(): Promise<{ port: number; connections: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>()
  const close = () => {
    for (const s of sockets) s.destroy()
    return new Promise<void>((r) => server.close(() => r()))
  }
  const state = { port: 0, connections: 0, close }
  const server: Server = createServer((socket) => {
    state.connections++
    sockets.add(socket)
    socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok')
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  state.port = (server.address() as AddressInfo).port
  return state
}

t.test('when connecting: every spelling refused before a connection, by default', async (t) => {
  const local = await counting()
  t.teardown(() => local.close())
  const http = egressFetch(policy())
  t.teardown(() => http.close())
  for (const host of [...LOOPBACK_SPELLINGS.filter((h) => !h.includes(':')), 'localhost', 'api.localhost']) {
    const failed = await http.fetch(`http://${host}:${local.port}/agent`, { method: 'POST', body: '{}' }).catch((e: unknown) => e)
    t.match(egressRefusalOf(failed)?.message, /loopback/, host)
  }
  t.equal(local.connections, 0, 'no connection reached the local server')
})

t.test('DNS rebinding: a name public when checked, loopback when connecting, gets no connection', async (t) => {
  const local = await counting()
  t.teardown(() => local.close())
  const asked: string[] = []
  // The resolver answers a public address the first time (as when an operator or a check looks), then loopback.
  const lookup: EgressLookup = (hostname, _options, callback) => {
    asked.push(hostname)
    const address: LookupAddress = asked.length === 1 ? { address: '93.184.216.34', family: 4 } : { address: '127.0.0.1', family: 4 }
    queueMicrotask(() => callback(null, [address]))
  }
  lookup('rebind.example.com', { all: true }, () => undefined)
  const p = policy()
  t.equal(p.urlRefusal(`http://rebind.example.com:${local.port}/agent`), undefined, 'the name passes configuration')
  const refusals: string[] = []
  const http = egressFetch(p, { lookup, onRefused: (why) => refusals.push(why) })
  t.teardown(() => http.close())
  const failed = await http.fetch(`http://rebind.example.com:${local.port}/agent`, { method: 'POST', body: '{}' }).catch((e: unknown) => e)
  t.match(egressRefusalOf(failed)?.message, /127\.0\.0\.1 is loopback/)
  t.match(refusals, [/127\.0\.0\.1 is loopback/], "the operator's log is told why")

  // The agent step through the same fetch: refused in fixed words, no address, and still no connection.
  const step = new WebhookAgentStep(fastOptions({ url: `http://rebind.example.com:${local.port}/agent` }, 1000, 2000), {
    webhookSecret: SECRET,
    fetch: http.fetch,
    privateTarget: http.privateTarget,
  })
  t.same(replyOf(await events(step, MESSAGE, context())), [
    { type: 'error', code: 'agent_unreachable', message: 'request failed: refused by the egress policy', cause: 'connect_failed' },
  ])
  t.equal(local.connections, 0, 'not a byte reached the local server')
  t.same(asked, ['rebind.example.com', 'rebind.example.com', 'rebind.example.com'], 'resolved again for each connection')
})

t.test('privateTarget: a name that resolved to an allowed private address is private from then on', async (t) => {
  const local = await counting()
  t.teardown(() => local.close())
  const lookup: EgressLookup = (_hostname, _options, callback) =>
    queueMicrotask(() => callback(null, [{ address: '127.0.0.1', family: 4 }]))
  const http = egressFetch(policy({ allowCidrs: ['127.0.0.0/8'] }), { lookup })
  t.teardown(() => http.close())
  const url = `http://internal.example.com:${local.port}/agent`
  t.notOk(http.privateTarget(url), 'not known before connecting')
  const res = await http.fetch(url, { method: 'POST', body: '{}' })
  t.equal(res.status, 200)
  t.equal(await res.text(), 'ok')
  t.ok(http.privateTarget(url), 'known once connected')
  t.ok(http.privateTarget('https://10.0.0.1/agent'), 'an address says so itself')
  t.notOk(http.privateTarget('https://voice.example.com/tunnel/tun_1/api/agent'), 'the tunnel relay')
})
