/**
 * `voxgate init` end to end: the command run as a user runs it (bin/voxgate.js) against a real gateway; the
 * generated project installed offline (its one dependency, the CLI, a link to this checkout), its own test run
 * (`npm test`), `npx voxgate` resolved inside it, the talk link it prints, and the project started and sent a
 * request signed the way the gateway signs (pipeline/agent/signature.ts) and an unsigned one. Then every target
 * that cannot hold a project: one line on stderr, exit 1, no agent created, nothing left behind, no busy loop.
 */
import t from 'tap'
import { spawn, execFile } from 'node:child_process'
import { existsSync, lstatSync, mkdtempSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { startTestGateway } from '../helpers/gateway.js'
import { runCli } from '../helpers/run-cli.js'
import { freePort } from '../helpers/nginx.js'
import { parseDotEnv } from '../../cli/common/agent-id.js'
import { signWebhook } from '../../pipeline/agent/signature.js'

const execRaw = promisify(execFile)
/** npm as a user runs it: without the npm_* variables of the npm that may have started this test run. */
const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')))
const exec = (cmd: string, args: string[], opts: { cwd: string }) => execRaw(cmd, args, { ...opts, env: npmEnv })
t.setTimeout(180_000)

const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '')
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
  const readme = readFileSync(join(dir, 'README.md'), 'utf8')
  t.match(readme, /npm start +# http:\/\/localhost:3100\/api\/agent/, "the project's README names its port")
  t.match(
    readme,
    /npx voxgate tunnel +# forwards to http:\/\/localhost:3100\/api\/agent \(PORT in \.env\)/,
    'and the tunnel forwarding there',
  )
  t.equal(statSync(join(dir, '.env')).mode & 0o777, 0o600, '.env is readable by its owner only')
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  t.same(pkg.dependencies ?? {}, {}, 'no runtime dependencies')
  t.same(pkg.devDependencies, { voxgate: `file:${root}` }, 'the CLI: a link to the checkout init ran from')
  t.equal(pkg.name, 'my-agent')
  t.match(r.stdout, /next:\n {2}cd \S*my-agent\n {2}npm install && npm start .*3100.*\n {2}npx voxgate tunnel /, 'the next steps')

  // The talk link: the demo page talking to the new agent.
  const link = /Talk to your agent: (http\S+#link=(vxl_\S+))\n$/.exec(r.stdout)
  t.ok(link, 'the last line is the talk link')
  t.ok(link![1]!.startsWith(`${gw.config.publicUrl}/#link=`), "on the gateway's public URL")
  const session = await gw.request('POST', '/v1/agent_links/authorize_session', { key: link![2]!, body: {} })
  t.equal(session.status, 200, 'the link authorizes a browser session')
  const sessionRow = await gw.store.db
    .selectFrom('sessions')
    .select('agent_id')
    .where('conversation_id', '=', session.body.conversation_id)
    .executeTakeFirstOrThrow()
  t.equal(sessionRow.agent_id, env.VOXGATE_AGENT_ID, 'with the new agent')

  // An npm cache of this test run, empty: an offline install must need nothing from it.
  const cache = join(work, 'npm-cache')
  mkdirSync(cache, { recursive: true })
  const started = Date.now()
  const install = await exec('npm', ['install', '--offline', '--no-audit', '--no-fund', '--cache', cache], { cwd: dir })
  t.comment(`npm install: ${Date.now() - started} ms`)
  t.ok(statSync(join(dir, 'package-lock.json')).isFile(), 'npm install --offline succeeded with an empty cache')
  t.notMatch(install.stderr, /warn/i, 'and printed no warning')
  t.ok(lstatSync(join(dir, 'node_modules', 'voxgate')).isSymbolicLink(), 'node_modules/voxgate is a link')
  t.equal(realpathSync(join(dir, 'node_modules', 'voxgate')), realpathSync(root), 'to this checkout')
  const npx = await exec('npx', ['--offline', '--cache', cache, 'voxgate', 'tunnel', '--help'], { cwd: dir })
  t.match(npx.stdout, /^usage: voxgate tunnel/, 'npx voxgate runs the linked CLI in the project')
  const test = await exec('npm', ['test', '--cache', cache], { cwd: dir }).catch((e) => e as { stdout: string; code: number })
  t.match(test.stdout, /# pass 8/, "the project's own tests pass")
  t.match(test.stdout, /# fail 0/)

  const port = await freePort()
  const server = spawn('npm', ['start', '--cache', cache], {
    cwd: dir,
    env: { ...npmEnv, PORT: String(port) },
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
  t.match(r.stdout, /Talk to your agent: http\S+#link=vxl_/, 'a talk link for the linked agent too')

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
  t.notOk(existsSync(join(work, 'z')), 'the folder it made is removed when the gateway refuses')
  const down = await runCli(['init', join(work, 'deep', 'er'), '--gateway', 'http://127.0.0.1:9', '--api-key', gw.apiKey])
  t.equal(down.code, 1)
  t.match(down.stderr, /cannot reach the gateway/)
  t.notOk(existsSync(join(work, 'deep')), 'every level it made is removed when the gateway is down')
  const noLogin = await runCli(['init', join(work, 'w'), '--gateway', gw.url], { env: { VOXGATE_API_KEY: '' } })
  t.equal(noLogin.code, 1)
  t.match(noLogin.stderr, /not signed in/)
  const unknownCommand = await runCli(['frobnicate'])
  t.equal(unknownCommand.code, 2)
})

t.test('a target that cannot hold a project: one line, exit 1, no agent, nothing left, no busy loop', async (t) => {
  const places = mkdtempSync(join(tmpdir(), 'voxgate-init-bad-'))
  const aFile = join(places, 'afile')
  writeFileSync(aFile, 'x')
  symlinkSync(join(places, 'nowhere'), join(places, 'dangling'))
  const full = join(places, 'full')
  mkdirSync(full)
  writeFileSync(join(full, 'keep.txt'), 'x')
  const agents = async () => (await gw.request('GET', '/v1/agents', { key: gw.apiKey })).body.agents.length as number
  const before = await agents()
  const cases: [string, string, RegExp][] = [
    ['a path under a file', join(aFile, 'sub'), /afile is a file, not a folder/],
    ['a file', aFile, /exists and is not a folder/],
    ['a folder that is not empty', full, /exists and is not empty/],
    // A virtual file system: Node's recursive mkdir spins forever at 100% CPU here.
    ['a place no folder can be made (/proc)', '/proc/voxgate-nope/x', /cannot create .*\(ENOENT\)/],
    ['a path through a broken link', join(places, 'dangling', 'sub'), /dangling is a link to something that does not exist/],
  ]
  for (const [what, target, message] of cases) {
    let guard: NodeJS.Timeout | undefined
    const r = await Promise.race([
      runCli(['init', target, ...auth]),
      new Promise<never>((_, reject) => {
        guard = setTimeout(() => reject(new Error(`init ${target} still running after 20 s`)), 20_000)
      }),
    ]).finally(() => clearTimeout(guard))
    t.equal(r.code, 1, `${what}: exit 1`)
    t.match(r.stderr, message, `${what}: says why`)
    t.equal(r.stderr.split('\n').filter((l) => l !== '').length, 1, `${what}: one line on stderr (${r.stderr.trim()})`)
    t.notMatch(r.stderr, /\n\s+at /, `${what}: no stack trace`)
    t.notMatch(r.stdout, /created/, `${what}: nothing reported created`)
  }
  t.equal(await agents(), before, 'no agent was created')
  t.notOk(existsSync(join(places, 'nowhere')), 'nothing created behind the broken link')
  t.same(readFileSync(join(full, 'keep.txt'), 'utf8'), 'x', 'the non-empty folder is untouched')
})
