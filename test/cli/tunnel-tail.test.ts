/**
 * `voxgate tunnel --tail` shows what really happens to a webhook request: a line when it starts (so a backend that
 * holds it is visible at once) and one when it ends, a timeout of the agent step named as a timeout, a caller that
 * went away named as that. Driven by real browser sessions whose typed text the gateway's webhook step sends through
 * the tunnel. Then the exit codes: what cannot be fixed by retrying exits at once, what can is retried.
 */
import t from 'tap'
import { createServer, type ServerResponse } from 'node:http'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestGateway } from '../helpers/gateway.js'
import { runCli, spawnCli } from '../helpers/run-cli.js'
import { freePort } from '../helpers/nginx.js'
import { openBrowserSession } from '../helpers/ws-client.js'

t.setTimeout(240_000)

const port = await freePort()
const gw = await startTestGateway({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` })
t.teardown(() => gw.close())
const cliEnv = { VOXGATE_GATEWAY: gw.url, VOXGATE_API_KEY: gw.apiKey }
type Teardown = { teardown(fn: () => unknown): void }
/** The agent step's time_to_first_byte_ms in these tests. */
const FIRST_BYTE_MS = 2_000

/** A local backend that acknowledges session.start and holds every message until the test lets it go. */
async function holdingBackend(t: Teardown) {
  const held: { text: string; res: ServerResponse; closed: boolean; headers: string[] }[] = []
  const waiters = new Set<() => void>()
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      const event = JSON.parse(body) as { type: string; text?: string }
      if (event.type !== 'message') return res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      const h = { text: event.text ?? '', res, closed: false, headers: Object.keys(req.headers) }
      res.on('close', () => (h.closed = true))
      held.push(h)
      for (const w of waiters) w()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return {
    port: (server.address() as { port: number }).port,
    held,
    waitFor: (text: string) =>
      new Promise<(typeof held)[number]>((resolve) => {
        const check = () => {
          const h = held.find((x) => x.text === text)
          if (h === undefined) return
          waiters.delete(check)
          resolve(h)
        }
        waiters.add(check)
        check()
      }),
  }
}

/** An agent whose webhook step waits FIRST_BYTE_MS for the first byte. */
async function agentWithDeadline(): Promise<{ id: string }> {
  const agent = (await gw.request('POST', '/v1/agents', { body: { name: 'tail' } })).body
  await gw.request('POST', `/v1/agents/${agent.id}`, { body: { webhook_url: 'http://127.0.0.1:9/prod' } })
  const config = (await gw.request('GET', `/v1/agents/${agent.id}`)).body.config
  for (const p of config.plugins) if (p.use === 'agent.webhook') p.options.time_to_first_byte_ms = FIRST_BYTE_MS
  const r = await gw.request('POST', `/v1/agents/${agent.id}`, { body: { config } })
  if (r.status !== 200) throw new Error(JSON.stringify(r.body))
  return agent
}

async function browser(t: Teardown, agentId: string) {
  const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agentId } })
  const b = await openBrowserSession(gw.url, auth.body.client_session_key as string, { acknowledgePlayback: true })
  t.teardown(() => b.close())
  return b
}

t.test('a held request shows when it starts; the agent step giving up is a timeout; a caller leaving is not', async (t) => {
  const agent = await agentWithDeadline()
  const backend = await holdingBackend(t)
  const cli = spawnCli(['tunnel', `--agent-id=${agent.id}`, `--port=${backend.port}`, '--tail'], { env: cliEnv })
  t.teardown(() => cli.proc.kill('SIGKILL'))
  await cli.waitFor(/webhook URL: (\S+)/)

  const b1 = await browser(t, agent.id)
  b1.send({ type: 'client.response.text', content: 'are you there' })
  const started = await cli.waitFor(/\n(\S+) -> POST \/api\/agent message session \S+ turn (\S+) user: "are you there"\n/)
  const h1 = await backend.waitFor('are you there')
  t.notOk(h1.closed, 'the started line is printed while the backend still holds the request')
  t.notOk(h1.headers.includes('x-voxgate-sent-at'), "the gateway's own timing header is not passed on")
  t.ok(h1.headers.includes('service-signature'), 'the signed webhook headers are')
  t.notMatch(cli.stdout(), new RegExp(`<- turn ${started[2]}`), 'and before it ends')
  const ended = await cli.waitFor(new RegExp(`<- turn ${started[2]} timed out after \\d+ ms: the backend took too long: (.*)\\n`))
  t.equal(ended[1], `no byte of the reply within time_to_first_byte_ms (${FIRST_BYTE_MS} ms)`, 'named as the timeout it is')
  t.notMatch(cli.stdout(), new RegExp(`<- turn ${started[2]} cancelled`), 'not "the caller went away"')
  await new Promise((r) => setTimeout(r, 200))
  t.ok(h1.closed, 'the local request was stopped')

  // A caller that leaves before the deadline: not a timeout.
  const b2 = await browser(t, agent.id)
  b2.send({ type: 'client.response.text', content: 'never mind' })
  const s2 = await cli.waitFor(/-> POST \/api\/agent message session \S+ turn (\S+) user: "never mind"\n/)
  await backend.waitFor('never mind')
  b2.close()
  await cli.waitFor(new RegExp(`<- turn ${s2[1]} cancelled after \\d+ ms: the caller stopped waiting`))
  t.notMatch(cli.stdout(), new RegExp(`<- turn ${s2[1]} timed out`))

  cli.proc.kill('SIGINT')
  t.equal(await cli.exited, 0)
})

t.test('without --port: the PORT of .env in this folder, else 3000; where it came from is printed', async (t) => {
  const agent = (await gw.request('POST', '/v1/agents', { body: {} })).body
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-port-'))
  writeFileSync(join(dir, '.env'), `VOXGATE_AGENT_ID=${agent.id}\nPORT=4805\n`)
  const withEnv = spawnCli(['tunnel'], { env: cliEnv, cwd: dir })
  t.teardown(() => withEnv.proc.kill('SIGKILL'))
  await withEnv.waitFor(/forwarding to: http:\/\/localhost:4805\/api\/agent \(port from PORT in .*\.env\)/)
  withEnv.proc.kill('SIGINT')
  t.equal(await withEnv.exited, 0)

  const bare = mkdtempSync(join(tmpdir(), 'voxgate-port-'))
  const noEnv = spawnCli(['tunnel', '--agent-id', agent.id], { env: cliEnv, cwd: bare })
  t.teardown(() => noEnv.proc.kill('SIGKILL'))
  await noEnv.waitFor(/forwarding to: http:\/\/localhost:3000\/api\/agent \(port from the default/)
  noEnv.proc.kill('SIGTERM')
  t.equal(await noEnv.exited, 0, 'SIGTERM stops it as Ctrl-C does')

  writeFileSync(join(dir, '.env'), `VOXGATE_AGENT_ID=${agent.id}\nPORT=http\n`)
  const bad = await runCli(['tunnel'], { env: cliEnv, cwd: dir })
  t.equal(bad.code, 2, 'an invalid PORT in .env is a usage error')
  t.match(bad.stderr, /PORT in .*\.env must be a number from 1 to 65535, not "http"/)
})

t.test('exit codes: a refused key or an unknown agent exits 1 at once; an unreachable gateway is retried', async (t) => {
  const agent = (await gw.request('POST', '/v1/agents', { body: {} })).body
  const badKey = await runCli(['tunnel', '--agent-id', agent.id], { env: { ...cliEnv, VOXGATE_API_KEY: 'vgk_not-a-key' } })
  t.equal(badKey.code, 1)
  t.match(badKey.stderr, /the gateway refused the API key/)
  t.notMatch(badKey.stdout, /retrying/)

  const unknown = await runCli(['tunnel', '--agent-id', 'agt_nosuchagent'], { env: cliEnv })
  t.equal(unknown.code, 1)
  t.match(unknown.stderr, /Failed to retrieve Agent information/)

  const deadPort = await freePort()
  const away = spawnCli(['tunnel', '--agent-id', agent.id], {
    env: { ...cliEnv, VOXGATE_GATEWAY: `http://127.0.0.1:${deadPort}`, VOXGATE_TUNNEL_RETRY_MAX_MS: '300' },
  })
  t.teardown(() => away.proc.kill('SIGKILL'))
  await away.waitFor(/cannot open the tunnel: cannot reach the gateway .*ECONNREFUSED.*\(attempt 2\)/)
  away.proc.kill('SIGINT')
  t.equal(await away.exited, 0, 'stopped by the user while retrying: exit 0')

  const help = await runCli(['tunnel', '--help'])
  t.match(help.stdout, /Retried: .*connection refused/)
  t.match(help.stdout, /Exit 1, no retry: API key refused/)
})

t.test('a gateway shutting down mid-request: the request is cancelled as the shutdown, and the tunnel retries', async (t) => {
  const otherPort = await freePort()
  const other = await startTestGateway({ PORT: String(otherPort), PUBLIC_URL: `http://127.0.0.1:${otherPort}` })
  let closed = false
  t.teardown(() => (closed ? undefined : other.close()))
  const agent = (await other.request('POST', '/v1/agents', { body: {} })).body
  const backend = await holdingBackend(t)
  const cli = spawnCli(['tunnel', `--agent-id=${agent.id}`, `--port=${backend.port}`, '--tail'], {
    env: { VOXGATE_GATEWAY: other.url, VOXGATE_API_KEY: other.apiKey, VOXGATE_TUNNEL_RETRY_MAX_MS: '500' },
  })
  t.teardown(() => cli.proc.kill('SIGKILL'))
  await cli.waitFor(/webhook URL: /)
  const auth = await other.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agent.id } })
  const b = await openBrowserSession(other.url, auth.body.client_session_key as string)
  t.teardown(() => b.close())
  b.send({ type: 'client.response.text', content: 'hold this' })
  const s = await cli.waitFor(/-> POST \/api\/agent message session \S+ turn (\S+) user: "hold this"\n/)
  await backend.waitFor('hold this')
  closed = true
  await other.close()
  await cli.waitFor(new RegExp(`<- turn ${s[1]} cancelled after \\d+ ms: the gateway is shutting down`))
  await cli.waitFor(/tunnel connection lost: the connection closed \(1012 the gateway is restarting\); retrying/)
  await cli.waitFor(/cannot reconnect: .*\(attempt 2\)/)
  cli.proc.kill('SIGINT')
  t.equal(await cli.exited, 0, 'stopped while its gateway is gone: exit 0')
  t.match(cli.stdout(), /the gateway could not be reached; it restores the previous webhook URL when the tunnel's lease runs out/)
})
