/**
 * `voxgate init` end to end: the command run as a user runs it (bin/voxgate.js) against a real gateway; the
 * generated project installed offline, its own test run, and the project started and sent a request signed the
 * way the gateway signs (pipeline/webhook/signature.ts) and an unsigned one.
 */
import t from 'tap'
import { spawn, execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { startTestGateway } from '../helpers/gateway.js'
import { runCli } from '../helpers/run-cli.js'
import { freePort } from '../helpers/nginx.js'
import { parseDotEnv } from '../../cli/common/agent-id.js'
import { signWebhook } from '../../pipeline/webhook/signature.js'

const exec = promisify(execFile)
t.setTimeout(180_000)

const gw = await startTestGateway()
t.teardown(() => gw.close())
const work = mkdtempSync(join(tmpdir(), 'voxgate-init-'))
const auth = ['--gateway', gw.url, '--api-key', gw.apiKey]

function envOf(dir: string): Record<string, string> {
  return Object.fromEntries(parseDotEnv(readFileSync(join(dir, '.env'), 'utf8')))
}

t.test('init creates an agent and a project that installs offline, passes its test and checks signatures', async (t) => {
  const dir = join(work, 'my-agent')
  const r = await runCli(['init', dir, ...auth, '--port', '3100'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /created agent agt_/)
  const env = envOf(dir)
  const row = await gw.store.db.selectFrom('agents').selectAll().where('id', '=', env.VOXGATE_AGENT_ID!).executeTakeFirst()
  t.ok(row, 'the agent exists in the store')
  t.equal(row?.organization_id, gw.orgId, 'in the organization of the key')
  t.equal(env.VOXGATE_WEBHOOK_SECRET, row?.webhook_secret, '.env holds its webhook secret')
  t.equal(env.PORT, '3100')
  t.equal(statSync(join(dir, '.env')).mode & 0o777, 0o600, '.env is readable by its owner only')
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  t.same(pkg.dependencies ?? {}, {}, 'no runtime dependencies')
  t.equal(pkg.name, 'my-agent')

  // An npm cache of this test run, empty: an offline install must need nothing from it.
  const cache = join(work, 'npm-cache')
  mkdirSync(cache, { recursive: true })
  await exec('npm', ['install', '--offline', '--no-audit', '--no-fund', '--cache', cache], { cwd: dir })
  t.ok(statSync(join(dir, 'package-lock.json')).isFile(), 'npm install --offline succeeded with an empty cache')
  const test = await exec('npm', ['test', '--cache', cache], { cwd: dir }).catch((e) => e as { stdout: string; code: number })
  t.match(test.stdout, /# pass 3/, "the project's own test passes")
  t.match(test.stdout, /# fail 0/)

  const port = await freePort()
  const server = spawn('npm', ['start', '--cache', cache], {
    cwd: dir,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  t.teardown(() => process.kill(-server.pid!, 'SIGKILL'))
  let out = ''
  await new Promise<void>((resolve, reject) => {
    server.stdout!.on('data', (c: Buffer) => {
      out += c.toString()
      if (out.includes('agent backend on')) resolve()
    })
    server.once('exit', () => reject(new Error(`npm start ended: ${out}`)))
  })
  const url = `http://127.0.0.1:${port}/api/agent`
  const body = JSON.stringify({ type: 'message', text: 'what time is it', turn_id: 'turn-7', session_id: 's', conversation_id: 'c' })
  const signed = await fetch(url, { method: 'POST', headers: { 'service-signature': signWebhook(row!.webhook_secret, body) }, body })
  t.equal(signed.status, 200)
  t.match(signed.headers.get('content-type'), /text\/event-stream/)
  const text = await signed.text()
  t.match(text, /data: \{"type":"response.tts","content":"You said: what time is it.","turn_id":"turn-7"\}/)
  t.match(text, /data: \{"type":"response.end","turn_id":"turn-7"\}/)
  const unsigned = await fetch(url, { method: 'POST', body })
  t.equal(unsigned.status, 401, 'an unsigned request is refused')
  const otherSecret = await fetch(url, { method: 'POST', headers: { 'service-signature': signWebhook('whsec_other', body) }, body })
  t.equal(otherSecret.status, 401, 'a request signed with another secret is refused')
})

t.test('--agent-id links an existing agent; another organization gets the SPEC failure text', async (t) => {
  const agent = await gw.request('POST', '/v1/agents', { key: gw.apiKey, body: { name: 'existing' } })
  const dir = join(work, 'linked')
  const r = await runCli(['init', dir, ...auth, '--agent-id', agent.body.id])
  t.equal(r.code, 0, r.stderr)
  t.notMatch(r.stdout, /created agent/)
  t.same(envOf(dir), { VOXGATE_AGENT_ID: agent.body.id, VOXGATE_WEBHOOK_SECRET: agent.body.webhook_secret, PORT: '3000' })

  const other = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'other-org' } })
  const foreign = await runCli([
    'init',
    join(work, 'foreign'),
    '--gateway',
    gw.url,
    '--api-key',
    other.body.api_key,
    '--agent-id',
    agent.body.id,
  ])
  t.equal(foreign.code, 1)
  t.match(foreign.stderr, /Failed to retrieve Agent information/)
})

t.test('usage errors exit 2, failures 1, --help 0', async (t) => {
  const help = await runCli(['init', '--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /usage: voxgate init/)
  const unknown = await runCli(['init', '--nope', ...auth])
  t.equal(unknown.code, 2)
  t.match(unknown.stderr, /--nope/)
  const missing = await runCli(['init', join(work, 'x'), '--agent-id'])
  t.equal(missing.code, 2)
  const badPort = await runCli(['init', join(work, 'y'), '--port', 'eighty'])
  t.equal(badPort.code, 2)
  const full = join(work, 'full')
  mkdirSync(full)
  writeFileSync(join(full, 'keep.txt'), 'x')
  const exists = await runCli(['init', full, ...auth])
  t.equal(exists.code, 1)
  t.match(exists.stderr, /not empty/)
  const badKey = await runCli(['init', join(work, 'z'), '--gateway', gw.url, '--api-key', 'vgk_wrong'])
  t.equal(badKey.code, 1)
  const noLogin = await runCli(['init', join(work, 'w'), '--gateway', gw.url], { env: { VOXGATE_API_KEY: '' } })
  t.equal(noLogin.code, 1)
  t.match(noLogin.stderr, /not signed in/)
  const unknownCommand = await runCli(['frobnicate'])
  t.equal(unknownCommand.code, 2)
})
