/**
 * `voxgate tunnel` end to end on loopback: the CLI (bin/voxgate.js, a real process) connected to one gateway
 * replica; webhook requests sent to that replica and to a second one on the same database (relayed between them
 * through the store's notification channel); streaming, the local server down, the ownership failure, the agent
 * id's and the local port's sources, and the previous webhook restored on close, and by the lease sweep after a
 * CLI crash (the tunnel keeps its address for the lease, which TUNNEL_LEASE_MS shortens here).
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { createServer, type ServerResponse } from 'node:http'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestGateway } from '../helpers/gateway.js'
import { runCli, spawnCli } from '../helpers/run-cli.js'
import { freePort } from '../helpers/nginx.js'
import { signWebhook } from '../../pipeline/agent/signature.js'
import { resolveAgentId } from '../../cli/common/agent-id.js'
import { openTunnel } from '../../gateway/store/tunnels.js'
import { webhookSwap } from '../../gateway/tunnels/webhook-swap.js'

t.setTimeout(240_000)

const port = await freePort()
const publicUrl = `http://127.0.0.1:${port}`
const a = await startTestGateway({ PORT: String(port), PUBLIC_URL: publicUrl, TUNNEL_LEASE_MS: '3000' })
t.teardown(() => a.close())
// A second replica on the same database: the webhook may land on it while the tunnel is held by the first.
const b = await startTestGateway({ PORT: '0', PUBLIC_URL: publicUrl, TUNNEL_LEASE_MS: '3000' }, { db: a.db })
t.teardown(() => b.close())
const cliEnv = { VOXGATE_GATEWAY: a.url, VOXGATE_API_KEY: a.apiKey }

async function agentConfig(agentId: string): Promise<any> {
  return (await a.request('GET', `/v1/agents/${agentId}`)).body.config
}
function webhookUrl(config: any): string | undefined {
  return config.plugins.find((p: { use: string }) => p.use === 'agent.webhook')?.options.url
}
async function signedPost(url: string, secret: string, event: Record<string, unknown>): Promise<Response> {
  const body = JSON.stringify(event)
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'service-signature': signWebhook(secret, body) },
    body,
  })
}

t.test('the init project behind the tunnel answers webhooks on either replica; Ctrl-C restores the webhook', async (t) => {
  const dir = join(mkdtempSync(join(tmpdir(), 'voxgate-tunnel-')), 'project')
  const localPort = await freePort()
  const init = await runCli(['init', dir, '--port', String(localPort)], { env: cliEnv })
  t.equal(init.code, 0, init.stderr)
  const agentId = /for agent (agt_\S+)/.exec(init.stdout)?.[1] as string
  const agent = (await a.request('GET', `/v1/agents/${agentId}`)).body
  const before = structuredClone(agent.config)
  t.equal(webhookUrl(before), undefined, 'a new agent has the built-in agent step')

  const project = spawn(process.execPath, ['server.js'], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => project.kill('SIGKILL'))
  await new Promise<void>((resolve) => project.stdout!.on('data', (c: Buffer) => c.toString().includes('agent backend on') && resolve()))

  // Agent id and port from the project's .env (init --port wrote PORT there).
  const cli = spawnCli(['tunnel', '--tail'], { env: cliEnv, cwd: dir })
  t.teardown(() => cli.proc.kill('SIGKILL'))
  const ready = await cli.waitFor(/webhook URL: (\S+)/)
  t.match(cli.stdout(), /from VOXGATE_AGENT_ID in .*\.env/, 'the agent id came from the .env file')
  t.match(
    cli.stdout(),
    new RegExp(`forwarding to: http://localhost:${localPort}/api/agent \\(port from PORT in .*\\.env\\)`),
    "the port came from the project's .env",
  )
  const tunnelUrl = ready[1] as string
  t.match(tunnelUrl, new RegExp(`^${publicUrl}/tunnel/tun_[A-Za-z0-9_-]+/api/agent$`), 'PUBLIC_URL plus a tunnel path')
  t.equal(webhookUrl(await agentConfig(agentId)), tunnelUrl, "the agent's webhook URL is the tunnel's")

  const path = new URL(tunnelUrl).pathname
  for (const [name, gw] of [
    ['the replica holding the tunnel', a],
    ['another replica', b],
  ] as const) {
    const res = await signedPost(`${gw.url}${path}`, agent.webhook_secret, {
      type: 'message',
      text: `hi from ${name}`,
      turn_id: 'u1',
      session_id: 's1',
      conversation_id: 'c1',
    })
    t.equal(res.status, 200, name)
    t.match(res.headers.get('content-type'), /text\/event-stream/)
    t.match(await res.text(), `"content":"You said: hi from ${name}."`, `the echo came back through ${name}`)
  }
  t.same(b.gateway.tunnels.relays, { direct: 1, notified: 0 }, 'the other replica forwarded it straight to the holder')
  // A holder that cannot be reached directly (another network): the notification channel carries it instead.
  await a.store.db.updateTable('tunnels').set({ holder_url: 'http://127.0.0.1:9' }).where('webhook_url', '=', tunnelUrl).execute()
  await new Promise((r) => setTimeout(r, 2_100)) // the other replica trusts what it read of the tunnel for 2 s
  const fallback = await signedPost(`${b.url}${path}`, agent.webhook_secret, {
    type: 'message',
    text: 'hi through the database',
    turn_id: 'u2',
    session_id: 's1',
    conversation_id: 'c1',
  })
  t.match(await fallback.text(), '"content":"You said: hi through the database."', 'relayed through the notification channel')
  t.same(b.gateway.tunnels.relays, { direct: 1, notified: 1 })
  const unsigned = await fetch(`${b.url}${path}`, { method: 'POST', body: '{"type":"message"}' })
  t.equal(unsigned.status, 401, "the project's own 401 for an unsigned request is relayed")
  await cli.waitFor(
    /-> POST \/api\/agent message session s1 turn u1 user: "hi from another replica"\n.*<- turn u1 200 in \d+ ms \(\d+ bytes, 2 events\) agent: "You said: hi from another replica."/,
  )

  cli.proc.kill('SIGINT')
  t.equal(await cli.exited, 0, 'Ctrl-C ends with exit code 0')
  t.match(cli.stdout(), /webhook URL restored to none/)
  t.same(await agentConfig(agentId), before, 'the previous configuration is back')
  const gone = await signedPost(`${a.url}${path}`, agent.webhook_secret, {
    type: 'message',
    text: 'x',
    turn_id: 'u',
    session_id: 's',
    conversation_id: 'c',
  })
  t.equal(gone.status, 502)
  t.equal(((await gone.json()) as { code: string }).code, 'tunnel_unavailable')
})

t.test('an SSE reply streams through the tunnel event by event, on both replicas', async (t) => {
  const agent = (await a.request('POST', '/v1/agents', { body: { name: 'stream' } })).body
  await a.request('POST', `/v1/agents/${agent.id}`, { body: { webhook_url: 'http://127.0.0.1:9/old-hook' } })
  let release: () => void = () => undefined
  const local = createServer((req, res: ServerResponse) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('data: {"type":"response.tts","content":"first","turn_id":"t"}\n\n')
      release = () => {
        res.write('data: {"type":"response.tts","content":"second","turn_id":"t"}\n\n')
        res.end('data: {"type":"response.end","turn_id":"t"}\n\n')
      }
    })
  })
  await new Promise<void>((r) => local.listen(0, '127.0.0.1', r))
  t.teardown(() => local.close())
  const localPort = (local.address() as { port: number }).port
  const cli = spawnCli(['tunnel', `--agent-id=${agent.id}`, `--port=${localPort}`, '--path=/hook'], { env: cliEnv })
  t.teardown(() => cli.proc.kill('SIGKILL'))
  const tunnelUrl = (await cli.waitFor(/webhook URL: (\S+)/))[1] as string
  t.match(cli.stdout(), /previous webhook URL \(restored when the tunnel stops\): http:\/\/127.0.0.1:9\/old-hook/)
  for (const gw of [a, b]) {
    const res = await signedPost(`${gw.url}${new URL(tunnelUrl).pathname}`, agent.webhook_secret, { type: 'message', turn_id: 't' })
    const reader = res.body!.getReader()
    const first = new TextDecoder().decode((await reader.read()).value)
    t.match(first, /"content":"first"/, 'the first event arrived while the local server still held the second')
    t.notMatch(first, /second/)
    release()
    let rest = ''
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value)
    t.match(rest, /"content":"second"[\s\S]*response.end/)
  }
  cli.proc.kill('SIGINT')
  t.equal(await cli.exited, 0)
  t.equal(webhookUrl(await agentConfig(agent.id)), 'http://127.0.0.1:9/old-hook', 'the previous webhook URL is back')
})

t.test(
  'a local server that is down: the webhook gets 502, the tunnel says so and stays up; a killed CLI keeps its address for the lease',
  async (t) => {
    const agent = (await a.request('POST', '/v1/agents', { body: {} })).body
    const deadPort = await freePort()
    const cli = spawnCli(['tunnel', '--port', String(deadPort)], { env: { ...cliEnv, VOXGATE_AGENT_ID: agent.id } })
    t.teardown(() => cli.proc.kill('SIGKILL'))
    const tunnelUrl = (await cli.waitFor(/webhook URL: (\S+)/))[1] as string
    t.match(cli.stdout(), /from the VOXGATE_AGENT_ID environment variable/)
    const res = await signedPost(tunnelUrl.replace(publicUrl, b.url), agent.webhook_secret, {
      type: 'message',
      text: 'anyone?',
      turn_id: 't',
      session_id: 's',
      conversation_id: 'c',
    })
    t.equal(res.status, 502)
    const body = (await res.json()) as { code: string; error: string }
    t.equal(body.code, 'tunnel_local_error')
    t.match(body.error, /did not answer \(ECONNREFUSED\)/)
    await cli.waitFor(/did not answer \(ECONNREFUSED\)[\s\S]*the call goes on/)
    t.equal(cli.proc.exitCode, null, 'the tunnel is still running')
    // The CLI dies without a goodbye: the gateway cannot tell that from a dropped network, so the agent keeps the
    // tunnel address for the lease (a CLI that comes back takes it back), then the sweep restores the previous step.
    cli.proc.kill('SIGKILL')
    await cli.exited
    await new Promise((r) => setTimeout(r, 300))
    t.equal(webhookUrl(await agentConfig(agent.id)), tunnelUrl, 'right after the crash the agent still points at the tunnel')
    const restored = await (async () => {
      for (let i = 0; i < 400; i++) {
        const url = webhookUrl(await agentConfig(agent.id))
        if (url === undefined) return true
        await new Promise((r) => setTimeout(r, 50))
      }
      return false
    })()
    t.ok(restored, 'a killed CLI: the lease sweep restored the built-in agent step')
  },
)

t.test("another organization's agent: the SPEC's failure text, exit 1; a second tunnel for one agent is refused", async (t) => {
  const other = await a.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'tunnel-other' } })
  const theirs = (await a.request('POST', '/v1/agents', { key: other.body.api_key, body: {} })).body
  const r = await runCli(['tunnel', '--agent-id', theirs.id], { env: cliEnv })
  t.equal(r.code, 1)
  t.match(r.stderr, /Failed to retrieve Agent information/)
  t.notMatch(r.stdout, /retrying/, 'not retried')
  const row = await a.store.db.selectFrom('agents').select('config').where('id', '=', theirs.id).executeTakeFirstOrThrow()
  t.equal(webhookUrl(row.config), undefined, "their agent's webhook was not touched")

  const mine = (await a.request('POST', '/v1/agents', { body: {} })).body
  const first = spawnCli(['tunnel', '--agent-id', mine.id], { env: cliEnv })
  t.teardown(() => first.proc.kill('SIGKILL'))
  await first.waitFor(/webhook URL/)
  const second = await runCli(['tunnel', '--agent-id', mine.id], { env: cliEnv })
  t.equal(second.code, 1)
  t.match(second.stderr, /another tunnel is connected for this agent/)
  const usage = await runCli(['tunnel', '--port', 'x', '--agent-id', mine.id], { env: cliEnv })
  t.equal(usage.code, 2)
  const help = await runCli(['tunnel', '--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /--tail/)
  const noId = await runCli(['tunnel'], { env: { ...cliEnv, VOXGATE_AGENT_ID: '' }, cwd: tmpdir() })
  t.equal(noId.code, 1)
  t.match(noId.stderr, /no agent id/)
})

t.test('agent id order: --agent-id, then VOXGATE_AGENT_ID, then a .env entry ending in VOXGATE_AGENT_ID', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-envfile-'))
  writeFileSync(join(dir, '.env'), '# app\nOTHER=1\nexport NEXT_PUBLIC_VOXGATE_AGENT_ID="agt_fromfile"\n')
  t.same(resolveAgentId('agt_flag', { VOXGATE_AGENT_ID: 'agt_env' }, dir), { agentId: 'agt_flag', source: '--agent-id' })
  t.equal(resolveAgentId(undefined, { VOXGATE_AGENT_ID: 'agt_env' }, dir).agentId, 'agt_env')
  const fromFile = resolveAgentId(undefined, {}, dir)
  t.equal(fromFile.agentId, 'agt_fromfile')
  t.match(fromFile.source, /NEXT_PUBLIC_VOXGATE_AGENT_ID/)
  t.throws(() => resolveAgentId(undefined, {}, tmpdir()), /no agent id/)
})

t.test("a replica that crashed: any replica's lease sweep restores the previous webhook", async (t) => {
  const agent = (await a.request('POST', '/v1/agents', { body: {} })).body
  await a.request('POST', `/v1/agents/${agent.id}`, { body: { webhook_url: 'http://127.0.0.1:9/prod' } })
  const before = await agentConfig(agent.id)
  // What a replica that died right after opening a tunnel leaves behind: the row, the agent pointing at it.
  const opened = await openTunnel(
    a.store.db,
    {
      id: 'tun_crashed',
      organizationId: a.orgId,
      agentId: agent.id,
      webhookUrl: `${publicUrl}/tunnel/tun_crashed/api/agent`,
      holder: 'dead-replica',
      leaseMs: 60_000,
    },
    webhookSwap({ allowInsecureLoopback: true }),
  )
  t.ok(opened.ok)
  t.equal(webhookUrl(await agentConfig(agent.id)), `${publicUrl}/tunnel/tun_crashed/api/agent`)
  // Its lease runs out (expired only now: the replicas' own timers sweep too, and must not win the race to here).
  await a.store.db
    .updateTable('tunnels')
    .set({ lease_expires_at: new Date(Date.now() - 1) })
    .where('id', '=', 'tun_crashed')
    .execute()
  await b.gateway.tunnels.sweep()
  t.same(await agentConfig(agent.id), before, 'the production webhook is back')
  const row = await a.store.db.selectFrom('tunnels').selectAll().where('id', '=', 'tun_crashed').executeTakeFirst()
  t.equal(row, undefined, 'the tunnel row is gone')
})
