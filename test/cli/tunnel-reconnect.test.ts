/**
 * `voxgate tunnel` survives its gateway's restart: a `voxgate serve` process on a fixed port (file-backed embedded
 * database, or the test Postgres server with DATABASE_URL) is stopped with SIGTERM and started again on the same
 * port. The CLI prints a line per reconnection attempt, gets the same tunnel address back, and a browser session's
 * typed text made after the restart reaches the local backend through it. Ctrl-C then exits 0 and restores the
 * previous webhook URL. And a network that drops under a gateway that stays up (and does not notice at once): the
 * CLI takes its live tunnel back, and the agent never points anywhere else meanwhile.
 */
import t from 'tap'
import { createServer } from 'node:http'
import { connect, createServer as createTcpServer, type Socket } from 'node:net'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ADMIN_TOKEN, startTestGateway } from '../helpers/gateway.js'
import { signWebhook } from '../../pipeline/agent/signature.js'
import { testDb } from '../helpers/db.js'
import { freePort } from '../helpers/nginx.js'
import { spawnServe, type ServeProcess } from '../helpers/spawn-serve.js'
import { spawnCli } from '../helpers/run-cli.js'
import { openBrowserSession } from '../helpers/ws-client.js'

t.setTimeout(240_000)

const port = await freePort()
const url = `http://127.0.0.1:${port}`
// A lease longer than any restart here: the CLI takes its tunnel back (past the lease it would get a new address).
const env: Record<string, string> = { ADMIN_TOKEN, ALLOW_INSECURE_WEBHOOKS: '1', PUBLIC_URL: url, TUNNEL_LEASE_MS: '60000' }
if (process.env.DATABASE_URL !== undefined) {
  const db = await testDb()
  // The gateway processes open the database themselves; this handle only makes and drops it.
  t.teardown(() => db.cleanup())
  env.DATABASE_URL = db.options.databaseUrl!
} else {
  env.DATA_DIR = mkdtempSync(join(tmpdir(), 'voxgate-tunnel-restart-'))
}

/**
 * A TCP hop from the CLI to the gateway on `gwPort`: its client sides (`clientSides`) can be cut while the gateway's
 * side stays open, and while `away` is set it turns new connections away (the network gone).
 */
async function cuttableHop(test: { teardown(fn: () => unknown): void }, gwPort: number) {
  const hop = { away: false, clientSides: new Set<Socket>(), proxyUrl: '' }
  const proxy = createTcpServer((client) => {
    if (hop.away) return client.destroy()
    const upstream = connect(gwPort, '127.0.0.1')
    hop.clientSides.add(client)
    client.on('close', () => hop.clientSides.delete(client))
    client.on('error', () => undefined)
    upstream.on('error', () => undefined)
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r))
  test.teardown(() => proxy.close())
  hop.proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`
  return hop
}

async function call(method: string, path: string, key: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
}
function webhookUrl(config: any): string | undefined {
  return config.plugins.find((p: { use: string }) => p.use === 'agent.webhook')?.options.url
}

t.test('the tunnel reconnects after its gateway restarts and carries the next turn', async (t) => {
  let gateway: ServeProcess = await spawnServe(env, { port })
  t.teardown(() => gateway.proc.kill('SIGKILL'))
  const org = await call('POST', '/admin/v1/organizations', ADMIN_TOKEN, { name: 'tunnel-restart' })
  t.equal(org.status, 201, 'an organization')
  const key = org.body.api_key as string
  const created = await call('POST', '/v1/agents', key, { name: 'restart' })
  t.equal(created.status, 201, 'an agent')
  const agent = created.body
  t.equal((await call('POST', `/v1/agents/${agent.id}`, key, { webhook_url: 'http://127.0.0.1:9/prod' })).status, 200)

  // The local backend: says what it heard; session.start is acknowledged without a welcome.
  const heard: string[] = []
  const local = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      const event = JSON.parse(body) as { type: string; text?: string; turn_id?: string }
      if (event.type !== 'message') return res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      heard.push(event.text ?? '')
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(`data: ${JSON.stringify({ type: 'response.tts', content: `You said: ${event.text}.`, turn_id: event.turn_id })}\n\n`)
      res.end(`data: ${JSON.stringify({ type: 'response.end', turn_id: event.turn_id })}\n\n`)
    })
  })
  await new Promise<void>((r) => local.listen(0, '127.0.0.1', r))
  t.teardown(() => local.close())
  const localPort = (local.address() as { port: number }).port

  const cli = spawnCli(['tunnel', '--agent-id', agent.id, '--port', String(localPort), '--tail'], {
    env: { VOXGATE_GATEWAY: url, VOXGATE_API_KEY: key, VOXGATE_TUNNEL_RETRY_MAX_MS: '1000' },
  })
  t.teardown(() => cli.proc.kill('SIGKILL'))
  const tunnelUrl = (await cli.waitFor(/webhook URL: (\S+)/))[1] as string
  t.equal(webhookUrl((await call('GET', `/v1/agents/${agent.id}`, key)).body.config), tunnelUrl)

  // The gateway stops (SIGTERM: it drains and exits) and comes back on the same port a little later.
  gateway.proc.kill('SIGTERM')
  t.same(await gateway.exited, { code: 0, signal: null }, 'the gateway shut down cleanly')
  await cli.waitFor(/tunnel connection lost: the connection closed \(1012 the gateway is restarting\); retrying in [\d.]+ s \(attempt 1\)/)
  await cli.waitFor(/cannot reconnect: cannot reach the gateway at .*ECONNREFUSED.*; retrying in [\d.]+ s \(attempt 3\)/)
  t.equal(cli.proc.exitCode, null, 'the tunnel keeps running while its gateway is away')
  gateway = await spawnServe(env, { port })
  const back = await cli.waitFor(/tunnel back \([^)]*\): (\S+)/)
  t.equal(back[1], tunnelUrl, 'the same tunnel address')
  t.equal(webhookUrl((await call('GET', `/v1/agents/${agent.id}`, key)).body.config), tunnelUrl, 'the agent points at it')
  const attempts = cli.stdout().match(/retrying in/g)?.length ?? 0
  t.ok(attempts >= 3, `one line per attempt (${attempts})`)

  // A browser session made after the restart: its typed text goes through the tunnel to the local backend.
  const auth = await call('POST', '/v1/agents/web/authorize_session', key, { agent_id: agent.id })
  t.equal(auth.status, 200, 'a browser session authorized')
  const browser = await openBrowserSession(url, auth.body.client_session_key as string, { acknowledgePlayback: true })
  t.teardown(() => browser.close())
  browser.send({ type: 'client.response.text', content: 'hello after the restart' })
  const reply = await browser.waitFor((m) => m.type === 'response.text' && /You said: hello after the restart/.test(String(m.content)))
  t.ok(reply, 'the answer came back through the tunnel')
  t.same(heard, ['hello after the restart'], 'the local backend heard it')
  await cli.waitFor(/-> POST \/api\/agent message session \S+ turn \S+ user: "hello after the restart"/)
  await cli.waitFor(/<- turn \S+ 200 in \d+ ms \(\d+ bytes, 2 events\) agent: "You said: hello after the restart."/)
  browser.close()

  cli.proc.kill('SIGINT')
  t.equal(await cli.exited, 0, 'Ctrl-C: exit 0')
  t.match(cli.stdout(), /webhook URL restored to http:\/\/127.0.0.1:9\/prod/)
  t.equal(
    webhookUrl((await call('GET', `/v1/agents/${agent.id}`, key)).body.config),
    'http://127.0.0.1:9/prod',
    'the previous webhook is back',
  )
})

t.test('the network drops while the gateway stays up: the CLI takes its live tunnel back', async (t) => {
  const gwPort = await freePort()
  const gw = await startTestGateway({ PORT: String(gwPort), PUBLIC_URL: `http://127.0.0.1:${gwPort}` })
  t.teardown(() => gw.close())
  // A TCP hop between the CLI and the gateway whose client side can be cut while the gateway's side stays open.
  const { clientSides, proxyUrl } = await cuttableHop(t, gwPort)

  const agent = (await gw.request('POST', '/v1/agents', { body: {} })).body
  const local = createServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"type":"response.end"}'))
  })
  await new Promise<void>((r) => local.listen(0, '127.0.0.1', r))
  t.teardown(() => local.close())
  const cli = spawnCli(['tunnel', '--agent-id', agent.id, '--port', String((local.address() as { port: number }).port)], {
    env: { VOXGATE_GATEWAY: proxyUrl, VOXGATE_API_KEY: gw.apiKey, VOXGATE_TUNNEL_RETRY_MAX_MS: '1000' },
  })
  t.teardown(() => cli.proc.kill('SIGKILL'))
  const tunnelUrl = (await cli.waitFor(/webhook URL: (\S+)/))[1] as string

  for (const c of clientSides) c.destroy()
  await cli.waitFor(/tunnel connection lost: .*; retrying in/)
  t.equal(
    webhookUrl((await gw.request('GET', `/v1/agents/${agent.id}`)).body.config),
    tunnelUrl,
    'meanwhile the agent points at the tunnel',
  )
  const back = await cli.waitFor(/tunnel back \(the same tunnel\): (\S+)/)
  t.equal(back[1], tunnelUrl, 'the same address, taken back from the socket the gateway still held')
  const body = JSON.stringify({ type: 'message', text: 'still there?', turn_id: 't', session_id: 's', conversation_id: 'c' })
  const res = await fetch(tunnelUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'service-signature': signWebhook(agent.webhook_secret, body) },
    body,
  })
  t.equal(res.status, 200, 'a webhook request reaches the local server through the new connection')
  t.equal(await res.text(), '{"type":"response.end"}')
  cli.proc.kill('SIGINT')
  t.equal(await cli.exited, 0)
  t.equal(webhookUrl((await gw.request('GET', `/v1/agents/${agent.id}`)).body.config), undefined, 'the built-in step is back')
})

t.test('back after the lease ran out (a laptop that slept): a new tunnel, its new address printed', async (t) => {
  const gwPort = await freePort()
  const gw = await startTestGateway({ PORT: String(gwPort), PUBLIC_URL: `http://127.0.0.1:${gwPort}` })
  t.teardown(() => gw.close())
  // A TCP hop that can turn the CLI away (the network gone) while the test lets the tunnel's lease run out.
  const hop = await cuttableHop(t, gwPort)
  const { clientSides, proxyUrl } = hop

  const agent = (await gw.request('POST', '/v1/agents', { body: {} })).body
  const cli = spawnCli(['tunnel', '--agent-id', agent.id, '--port', '9'], {
    env: { VOXGATE_GATEWAY: proxyUrl, VOXGATE_API_KEY: gw.apiKey, VOXGATE_TUNNEL_RETRY_MAX_MS: '1000' },
  })
  t.teardown(() => cli.proc.kill('SIGKILL'))
  const oldUrl = (await cli.waitFor(/webhook URL: (\S+)/))[1] as string

  hop.away = true
  for (const c of clientSides) c.destroy()
  await cli.waitFor(/cannot reconnect: .*; retrying in/)
  await gw.store.db
    .updateTable('tunnels')
    .set({ lease_expires_at: new Date(Date.now() - 1) })
    .execute()
  hop.away = false
  const back = await cli.waitFor(/tunnel back at a NEW address \(the old one expired while disconnected\): (\S+)/)
  const newUrl = back[1] as string
  t.not(newUrl, oldUrl, 'a new address')
  t.match(newUrl, new RegExp(`^http://127.0.0.1:${gwPort}/tunnel/tun_[A-Za-z0-9_-]{16}/api/agent$`), "the gateway's own id")
  t.equal(webhookUrl((await gw.request('GET', `/v1/agents/${agent.id}`)).body.config), newUrl, 'the agent points at it')
  cli.proc.kill('SIGINT')
  t.equal(await cli.exited, 0)
})
