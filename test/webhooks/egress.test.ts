/**
 * The webhook egress policy: which addresses webhooks may reach (unit), the fetch that enforces it on a real
 * connection (a host name resolving to the gateway itself or to a denied range never gets a connection), refusals
 * at configuration time with the SPEC's error body, and at delivery time for a lifecycle webhook (not retried).
 */
import t from 'tap'
import { createServer, type Server } from 'node:http'
import { hostname } from 'node:os'
import { lookup } from 'node:dns/promises'
import type { AddressInfo } from 'node:net'
import { EgressPolicy, configUrlRefusals } from '../../gateway/webhooks/egress-policy.js'
import { egressFetch, egressRefusalOf } from '../../gateway/webhooks/egress-fetch.js'
import { loadConfig } from '../../server/config.js'
import { startTestGateway } from '../helpers/gateway.js'
import { openBrowserSession } from '../helpers/ws-client.js'

/** An HTTP server answering 200 "ok" and counting requests. */
async function server(): Promise<{ port: number; hits: number; close(): Promise<void> }> {
  const s: Server = createServer((_req, res) => {
    state.hits++
    res.end('ok')
  })
  const state = { port: 0, hits: 0, close: () => new Promise<void>((r) => s.close(() => r())) }
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  state.port = (s.address() as AddressInfo).port
  return state
}

t.test('the policy: metadata and link-local refused, the gateway itself refused except its tunnel paths', async (t) => {
  const p = new EgressPolicy({
    ownPort: 3000,
    publicUrl: 'https://voice.example.com',
    selfPathPrefixes: ['/tunnel/'],
    localAddresses: ['10.1.2.3'],
  })
  t.match(p.addressRefusal('169.254.169.254', 80), /link-local/)
  t.match(p.addressRefusal('::ffff:169.254.169.254', 80), /link-local/, 'IPv4-mapped IPv6 is the IPv4 address')
  t.match(p.addressRefusal('fd00:ec2::254', 80), /metadata/)
  t.match(p.addressRefusal('fe80::1', 443), /link-local/)
  t.match(p.addressRefusal('0.0.0.0', 443), /this network/)
  t.match(p.addressRefusal('100.100.100.200', 80), /metadata/)
  t.match(p.addressRefusal('127.0.0.1', 3000), /the gateway itself/)
  t.match(p.addressRefusal('10.1.2.3', 3000), /the gateway itself/, "an interface's address at the gateway's port")
  t.equal(p.addressRefusal('127.0.0.1', 3000, true), undefined, 'its tunnel paths')
  t.match(p.addressRefusal('127.0.0.1', 8080), /loopback/, 'another service on this machine')
  t.match(p.addressRefusal('10.20.0.5', 443), /RFC 1918/, 'a private network')
  t.match(p.addressRefusal('10.1.2.3', 8080), /RFC 1918/, "an interface's address at another port")
  t.equal(p.addressRefusal('93.184.216.34', 443), undefined)

  t.match(p.urlRefusal('https://169.254.169.254/latest/meta-data/'), /link-local/)
  t.match(p.urlRefusal('http://[::ffff:a9fe:a9fe]/'), /link-local/, 'hex-spelled mapped address')
  t.match(p.urlRefusal('http://localhost:3000/v1/agents'), /the gateway itself/)
  t.match(p.urlRefusal('https://voice.example.com/v1/agents'), /PUBLIC_URL/)
  t.equal(p.urlRefusal('https://voice.example.com/tunnel/tun_1/api/agent'), undefined, 'the tunnel relay')
  t.match(p.urlRefusal('http://localhost:3001/api/agent'), /loopback/)
  t.equal(p.urlRefusal('https://backend.example.com/agent'), undefined, 'a name is checked when connecting')

  const listed = new EgressPolicy({
    ownPort: 3000,
    publicUrl: 'http://localhost:3000',
    allowCidrs: ['169.254.10.0/24'],
    denyCidrs: ['10.0.0.0/8', '169.254.10.7'],
  })
  t.equal(listed.addressRefusal('169.254.10.1', 80), undefined, 'EGRESS_ALLOW_CIDRS lets a range past the built-in rules')
  t.match(listed.addressRefusal('169.254.10.7', 80), /EGRESS_DENY_CIDRS/, 'the deny list wins over the allow list')
  t.match(listed.addressRefusal('10.20.0.5', 443), /EGRESS_DENY_CIDRS/)

  t.same(
    configUrlRefusals(p, {
      plugins: [
        { use: 'turn_manager', options: {} },
        { use: 'agent.webhook', options: { url: 'https://169.254.169.254/' } },
      ],
      session_webhook: { url: 'https://voice.example.com/hooks' },
    }),
    [
      'config.plugins[1].options.url: 169.254.169.254 is link-local (cloud metadata services live at 169.254.169.254)',
      'config.session_webhook.url: points at the gateway itself (PUBLIC_URL)',
    ],
  )
})

t.test('answers asked again are the same, and follow the own port once it is known', async (t) => {
  let port = 0
  const p = new EgressPolicy({ ownPort: () => port, publicUrl: 'https://voice.example.com', localAddresses: [], allowLoopback: true })
  t.equal(p.addressRefusal('127.0.0.1', 4100), undefined, 'before listening, 4100 is another local service')
  t.equal(p.addressRefusal('127.0.0.1', 4100), undefined, 'asked again: the same')
  port = 4100
  t.match(p.addressRefusal('127.0.0.1', 4100), /the gateway itself/, 'once listening on 4100, that is the gateway')
  t.match(p.addressRefusal('127.0.0.1', 4100), /the gateway itself/, 'asked again: the same')
  t.equal(p.addressRefusal('127.0.0.1', 4100, true), undefined, 'its tunnel paths may still reach it')
  t.match(p.urlRefusal('http://169.254.169.254/latest'), /link-local/)
  t.match(p.urlRefusal('http://169.254.169.254/latest'), /link-local/, 'a URL asked again: the same')
  for (let i = 0; i < 1100; i++) p.addressRefusal(`10.0.${i >> 8}.${i & 255}`, 80)
  t.match(p.addressRefusal('127.0.0.1', 4100), /the gateway itself/, 'past the bound of kept answers: found again')
})

t.test('environment: EGRESS_ALLOW_CIDRS and EGRESS_DENY_CIDRS are validated lists; the former names still work', async (t) => {
  t.same(loadConfig({}).egressDenyCidrs, [])
  t.same(loadConfig({}).warnings, [])
  t.same(loadConfig({ EGRESS_DENY_CIDRS: '10.0.0.0/8, fd00::/8,192.0.2.1' }).egressDenyCidrs, ['10.0.0.0/8', 'fd00::/8', '192.0.2.1'])
  t.throws(() => loadConfig({ EGRESS_ALLOW_CIDRS: '10.0.0.0/33' }), /EGRESS_ALLOW_CIDRS: "10.0.0.0\/33" has a prefix length outside 0-32/)
  t.throws(() => loadConfig({ EGRESS_DENY_CIDRS: 'intranet' }), /EGRESS_DENY_CIDRS: "intranet" is not an IP address/)

  const old = loadConfig({ WEBHOOK_ALLOW_CIDRS: '10.1.0.0/16', WEBHOOK_DENY_CIDRS: '10.1.2.0/24' })
  t.same([old.egressAllowCidrs, old.egressDenyCidrs], [['10.1.0.0/16'], ['10.1.2.0/24']], 'read under their former names')
  t.match(old.warnings, [/WEBHOOK_ALLOW_CIDRS .*EGRESS_ALLOW_CIDRS/, /WEBHOOK_DENY_CIDRS .*EGRESS_DENY_CIDRS/])
  t.throws(() => loadConfig({ WEBHOOK_DENY_CIDRS: 'intranet' }), /WEBHOOK_DENY_CIDRS: "intranet" is not an IP address/)
  const both = loadConfig({ WEBHOOK_ALLOW_CIDRS: '10.1.0.0/16', EGRESS_ALLOW_CIDRS: '10.2.0.0/16' })
  t.same(both.egressAllowCidrs, ['10.2.0.0/16'], 'the new name wins')
  t.match(both.warnings, [/WEBHOOK_ALLOW_CIDRS is ignored: EGRESS_ALLOW_CIDRS, its new name, is set/])
})

t.test('the fetch: a name resolving to the gateway itself or a denied range gets no connection', async (t) => {
  const own = await server()
  const other = await server()
  t.teardown(() => Promise.all([own.close(), other.close()]))
  const name = hostname()
  const resolved = await lookup(name)
  t.ok(resolved.address !== '', `${name} resolves (${resolved.address}) on this machine`)
  // This machine's name resolves to loopback or to a private address: both let through, as an operator would.
  const policy = new EgressPolicy({
    ownPort: own.port,
    publicUrl: `http://127.0.0.1:${own.port}`,
    selfPathPrefixes: ['/tunnel/'],
    localAddresses: [resolved.address],
    allowLoopback: true,
    allowCidrs: [resolved.address],
  })
  const http = egressFetch(policy)
  t.teardown(() => http.close())

  const refused = await http.fetch(`http://${name}:${own.port}/hook`, { method: 'POST', body: '{}' }).catch((e: unknown) => e)
  t.match(egressRefusalOf(refused)?.message, /the gateway itself/, 'a host name that resolves to this gateway')
  t.equal(own.hits, 0, 'no request reached it')
  const ok = await http.fetch(`http://${name}:${other.port}/hook`, { method: 'POST', body: '{}' })
  t.equal(ok.status, 200, 'another service through the same name')
  t.equal(other.hits, 1)
  const tunnel = await http.fetch(`http://${name}:${own.port}/tunnel/tun_1/api/agent`, { method: 'POST', body: '{}' })
  t.equal(tunnel.status, 200, 'the tunnel relay on the gateway itself')
  t.equal(own.hits, 1)

  const denying = egressFetch(
    new EgressPolicy({
      ownPort: own.port,
      publicUrl: 'http://127.0.0.1:1',
      denyCidrs: [resolved.address, '::1/128'],
      allowLoopback: true,
      allowCidrs: [resolved.address],
    }),
  )
  t.teardown(() => denying.close())
  const denied = await denying.fetch(`http://${name}:${other.port}/hook`, { method: 'POST', body: '{}' }).catch((e: unknown) => e)
  t.match(egressRefusalOf(denied)?.message, /EGRESS_DENY_CIDRS/, 'a denied range, found by resolving the name')
  t.equal(other.hits, 1, 'no request reached it')
})

t.test("a webhook's request (redirects not followed) answers as fetch does: status, headers, body, failures", async (t) => {
  const s: Server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => {
      body += c
    })
    req.on('end', () => {
      if (req.url === '/sse') {
        res.writeHead(200, {
          'content-type': 'text/event-stream',
          'set-cookie': ['a=1', 'b=2'],
          'x-echo': `${req.headers['x-sig']} ${body}`,
        })
        res.write('data: one\n\n')
        setTimeout(() => res.end('data: two\n\n'), 20)
      } else if (req.url === '/none') {
        res.writeHead(204).end()
      } else if (req.url === '/moved') {
        res.writeHead(302, { location: '/sse' }).end('moved')
      } else if (req.url === '/broken') {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.write('data: one\n\n')
        setTimeout(() => res.destroy(), 20)
      } else if (req.url === '/slow') {
        setTimeout(() => res.end('late'), 2_000)
      }
    })
  })
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => s.close(() => r())))
  const base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`
  const http = egressFetch(new EgressPolicy({ ownPort: 9, publicUrl: 'http://voice.example.com', localAddresses: [], allowLoopback: true }))
  t.teardown(() => http.close())
  const post = (path: string, init: Partial<RequestInit> = {}) =>
    http.fetch(`${base}${path}`, { method: 'POST', body: '{"a":1}', headers: { 'x-sig': 's1' }, redirect: 'manual', ...init })

  const sse = await post('/sse')
  t.equal(sse.status, 200)
  t.ok(sse instanceof Response, 'a standard Response')
  t.equal(sse.headers.get('content-type'), 'text/event-stream')
  t.equal(sse.headers.get('x-echo'), 's1 {"a":1}', 'the request carried its headers and body')
  t.same(sse.headers.getSetCookie(), ['a=1', 'b=2'], 'repeated headers kept')
  t.equal(await sse.text(), 'data: one\n\ndata: two\n\n', 'the streamed body, whole')

  const none = await post('/none')
  t.equal(none.status, 204)
  t.equal(none.body, null, 'no body for a 204')
  const moved = await post('/moved')
  t.equal(moved.status, 302, 'a redirect is handed back, not followed')
  t.equal(moved.headers.get('location'), '/sse')
  t.equal(await moved.text(), 'moved')

  const broken = await post('/broken')
  const reader = broken.body!.getReader()
  t.equal(new TextDecoder().decode((await reader.read()).value), 'data: one\n\n')
  const cut = await reader.read().catch((e: unknown) => e)
  t.match(cut, { name: 'TypeError', message: 'terminated', cause: { code: 'UND_ERR_SOCKET' } }, 'a body cut off: as fetch says it')

  const refused = await http.fetch('http://127.0.0.1:1/hook', { method: 'POST', body: '{}', redirect: 'manual' }).catch((e: unknown) => e)
  t.match(refused, { name: 'TypeError', message: 'fetch failed', cause: { code: 'ECONNREFUSED' } }, 'no connection: as fetch says it')
  const selfRefused = await http
    .fetch('http://0.0.0.0:80/hook', { method: 'POST', body: '{}', redirect: 'manual' })
    .catch((e: unknown) => e)
  t.match(egressRefusalOf(selfRefused)?.message, /this network/, 'an egress refusal is found behind it')

  const timeout = AbortSignal.timeout(50)
  const aborted = await post('/slow', { signal: timeout }).catch((e: unknown) => e)
  t.match(aborted, { name: 'TimeoutError' }, "an abort rejects with the signal's reason")
})

t.test('the gateway refuses such URLs when configured, and at delivery when only a connection shows it', async (t) => {
  const gw = await startTestGateway()
  t.teardown(() => gw.close())
  const agent = (await gw.request('POST', '/v1/agents', { body: { template_id: 'voice-agent-webhook' } })).body

  const metadata = await gw.request('POST', `/v1/agents/${agent.id}`, {
    body: { webhook_url: 'https://169.254.169.254/latest/meta-data/' },
  })
  t.equal(metadata.status, 400)
  t.match(metadata.body, { code: 'validation_failed', error: /link-local/, details: [/options\.url: 169\.254\.169\.254 is link-local/] })
  const self = await gw.request('POST', `/v1/agents/${agent.id}`, { body: { webhook_url: `${gw.url}/v1/agents` } })
  t.equal(self.status, 400)
  t.match(self.body, { code: 'validation_failed', error: /the gateway itself/ })
  const override = await gw.request('POST', '/v1/agents/web/authorize_session', {
    body: { agent_id: agent.id, config: { session_webhook: { url: `http://localhost:${new URL(gw.url).port}/hooks` } } },
  })
  t.equal(override.status, 400)
  t.match(override.body, { code: 'validation_failed', details: [/session_webhook\.url: .*the gateway itself/] })

  // A host name is only known to point at the gateway once resolved: the lifecycle webhook fails at delivery,
  // once (a refusal is final), and says why.
  const port = new URL(gw.url).port
  const config = {
    ...agent.config,
    clients: { browser: true, carrier: false },
    plugins: [
      { use: 'turn_manager', options: { mode: 'automatic' } },
      { use: 'agent.webhook', options: { url: `https://${hostname()}:${port}/agent` } },
    ],
    session_webhook: { url: `https://${hostname()}:${port}/lifecycle`, events: ['session.start'] },
  }
  const saved = await gw.request('POST', `/v1/agents/${agent.id}`, { body: { config } })
  t.equal(saved.status, 200, 'a name passes configuration')
  const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agent.id } })
  const c = await openBrowserSession(gw.url, auth.body.client_session_key)
  t.teardown(() => c.close())
  const session = await gw.store.db
    .selectFrom('sessions')
    .select('id')
    .where('conversation_id', '=', auth.body.conversation_id)
    .executeTakeFirstOrThrow()
  const deadline = Date.now() + 10_000
  let row: { status: string; attempts: number; error: string | null } | undefined
  while (Date.now() < deadline) {
    row = await gw.store.db
      .selectFrom('webhook_deliveries')
      .select(['status', 'attempts', 'error'])
      .where('session_id', '=', session.id)
      .executeTakeFirst()
    if (row?.status === 'failed') break
    await new Promise((r) => setTimeout(r, 50))
  }
  t.match(row, { status: 'failed', attempts: 1, error: 'refused by the egress policy' }, 'in fixed words: no address, no rule')
})
