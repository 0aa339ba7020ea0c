/**
 * A developer's first hour, run as the Quick start says, on the default ports, with no switch set:
 *
 *   npm start                                  in the checkout: the gateway on :8080, first-start banner with the key
 *   npx voxgate init <folder>                  in the checkout (the key from the banner, as VOXGATE_API_KEY)
 *   cd <folder> && npm install && npm start    the example on :3000
 *   npx voxgate tunnel                         in the example's folder
 *
 * then a browser-protocol session opened with the talk link init printed, whose welcome and typed text are
 * answered by the example through the tunnel. Every step is the real command in a real process; only the data
 * folder (DATA_DIR), the CLI's config folder and npm's cache are temporary, and npm runs offline (the example needs
 * nothing from the registry). The key comes from the banner rather than `voxgate login`, which needs a browser to
 * approve. Ports 8080 and 3000 must be free: the test says so and stops rather than use others.
 *
 * Where the time goes (~85 s on a loaded 2-core machine): the gateway's start ~15 s (a dist/ rebuild when sources
 * changed), the first `npx voxgate` in the checkout ~15-35 s (npm links the checkout into its npx cache once; later
 * runs take ~4 s), the example's `npm install` 2-3 s, its tests ~4 s, the tunnel ~7 s, the two turns ~8 s.
 */
import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openBrowserSession } from '../helpers/ws-client.js'

t.setTimeout(300_000)

const root = fileURLToPath(new URL('../..', import.meta.url))
const GATEWAY_PORT = 8080
const PROJECT_PORT = 3000
const gatewayUrl = `http://localhost:${GATEWAY_PORT}`

/** The environment of a fresh shell: none of the gateway's settings, none of the npm that may run this test. */
const { DATABASE_URL: _db, ALLOW_INSECURE_WEBHOOKS: _insecure, PORT: _port, PUBLIC_URL: _public, HOST: _host, ...inherited } = process.env
const shellEnv: Record<string, string> = Object.fromEntries(
  Object.entries(inherited).filter((e): e is [string, string] => e[1] !== undefined && !e[0].toLowerCase().startsWith('npm_')),
)

const work = mkdtempSync(join(tmpdir(), 'voxgate-first-hour-'))
const cache = join(work, 'npm-cache')
mkdirSync(cache)
const userEnv = {
  ...shellEnv,
  XDG_CONFIG_HOME: join(work, 'config'),
  VOXGATE_NO_BROWSER: '1',
  npm_config_cache: cache,
  npm_config_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
}

/** A command in its own process group, so cleanup ends npm and everything it started. */
interface Running {
  proc: ChildProcess
  output(): string
  waitFor(re: RegExp, timeoutMs: number): Promise<RegExpExecArray>
  exited: Promise<number | null>
}
const running: Running[] = []
t.teardown(async () => {
  for (const r of running) {
    if (r.proc.exitCode === null && r.proc.signalCode === null) {
      try {
        process.kill(-r.proc.pid!, 'SIGKILL')
      } catch {
        // Already gone.
      }
    }
  }
  await Promise.all(running.map((r) => r.exited))
  rmSync(work, { recursive: true, force: true })
})

function run(command: string, args: string[], cwd: string, env: Record<string, string>): Running {
  const proc = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let out = ''
  const wake = new Set<() => void>()
  const onData = (c: Buffer) => {
    out += c.toString()
    for (const w of [...wake]) w()
  }
  proc.stdout!.on('data', onData)
  proc.stderr!.on('data', onData)
  const exited = new Promise<number | null>((resolve) => proc.once('close', (code) => resolve(code)))
  const r: Running = {
    proc,
    output: () => out,
    exited,
    waitFor(re, timeoutMs) {
      return new Promise((resolve, reject) => {
        const done = () => {
          clearTimeout(timer)
          wake.delete(check)
        }
        const check = () => {
          const m = re.exec(out)
          if (m === null) return
          done()
          resolve(m)
        }
        const timer = setTimeout(() => {
          done()
          reject(new Error(`${command} ${args.join(' ')}: no ${re} after ${timeoutMs} ms; output:\n${out}`))
        }, timeoutMs)
        wake.add(check)
        void exited.then((code) => {
          if (!wake.has(check)) return
          done()
          reject(new Error(`${command} ${args.join(' ')} exited (${code}) before ${re}; output:\n${out}`))
        })
        check()
      })
    },
  }
  running.push(r)
  return r
}

async function finish(command: string, args: string[], cwd: string, env: Record<string, string>) {
  const r = run(command, args, cwd, env)
  const code = await r.exited
  return { code, output: r.output() }
}

/** Whether nothing listens on the port (on all interfaces, as the gateway and the example listen). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer()
    srv.once('error', () => resolve(false))
    srv.listen(port, () => srv.close(() => resolve(true)))
  })
}

t.test('the first hour: gateway, init, the example, the tunnel, and a browser session answered by the example', async (t) => {
  for (const port of [GATEWAY_PORT, PROJECT_PORT]) {
    if (!(await portFree(port))) {
      t.fail(`port ${port} is in use on this machine: the first hour runs on the default ports (8080, 3000); free it`)
      return
    }
  }
  const started = Date.now()
  const step = (name: string) => t.comment(`${name}: ${((Date.now() - started) / 1000).toFixed(1)} s`)

  // 1. The gateway, as the Quick start runs it (the embedded database in a fresh data folder).
  const gateway = run('npm', ['start'], root, { ...userEnv, DATA_DIR: join(work, 'data') })
  const key = (await gateway.waitFor(/API key:\s+(vgk_\S+)/, 120_000))[1]!
  await gateway.waitFor(/voxgate listening/, 60_000)
  t.match(gateway.output(), /Talk to your agent: http:\/\/localhost:8080\/#link=vxl_/, 'the banner links the demo agent')
  step('gateway up')
  const cli = { ...userEnv, VOXGATE_API_KEY: key }

  // 2. init with the defaults (folder name, port, gateway), run from the checkout as the Quick start does.
  const projects = join(work, 'projects')
  mkdirSync(projects)
  const dir = join(projects, 'voxgate-agent')
  const init = await finish('npx', ['voxgate', 'init', dir], root, cli)
  t.equal(init.code, 0, init.output)
  t.match(init.output, /npx voxgate tunnel/, 'the next steps name the tunnel command')
  const link = /Talk to your agent: (http:\/\/localhost:8080\/#link=(vxl_\S+))/.exec(init.output)
  t.ok(link, 'init printed a talk link')
  step('init done')

  // 3. The example: npm install (offline, an empty cache: nothing to download), its own tests, npm start.
  const install = await finish('npm', ['install'], dir, cli)
  t.equal(install.code, 0, install.output)
  step('npm install done')
  const tests = await finish('npm', ['test'], dir, cli)
  t.equal(tests.code, 0, tests.output)
  t.match(tests.output, /# fail 0/, "the example's own tests pass")
  const project = run('npm', ['start'], dir, cli)
  await project.waitFor(/agent backend on http:\/\/localhost:3000\/api\/agent/, 30_000)
  step('example up')

  // 4. The tunnel, exactly as documented, in the example's folder.
  const tunnel = run('npx', ['voxgate', 'tunnel'], dir, cli)
  const ready = await tunnel.waitFor(/webhook URL: (http:\/\/localhost:8080\/tunnel\/\S+)/, 60_000)
  t.match(tunnel.output(), /forwarding to: http:\/\/localhost:3000\/api\/agent/)
  t.match(ready[1], /\/api\/agent$/)
  step('tunnel open')

  // 5. The talk link's session: the welcome and the typed text are the example's answers, through the tunnel.
  const auth = await fetch(`${gatewayUrl}/v1/agent_links/authorize_session`, {
    method: 'POST',
    headers: { authorization: `Bearer ${link![2]}`, 'content-type': 'application/json' },
    body: '{}',
  })
  t.equal(auth.status, 200)
  const { client_session_key } = (await auth.json()) as { client_session_key: string }
  const browser = await openBrowserSession(gatewayUrl, client_session_key, { acknowledgePlayback: true })
  t.teardown(() => browser.close())
  const welcome = await browser.waitFor((m) => m.type === 'response.text', 60_000)
  t.equal(welcome.m.content, 'Hello! This is your voxgate agent. Say something and I will repeat it.', "the example's welcome")
  await browser.waitFor((m) => m.type === 'turn.end' && m.role === 'assistant', 60_000)
  browser.send({ type: 'client.response.text', content: 'hello from the first hour' })
  const reply = await browser.waitFor((m) => m.type === 'response.text' && m.turn_id !== welcome.m.turn_id, 60_000)
  t.equal(reply.m.content, 'You said: hello from the first hour.', "the example's answer to the typed text")
  t.match(project.output(), /<- message: hello from the first hour/, 'the example received it')
  step('answered through the tunnel')
  browser.close()

  // Ctrl-C in the tunnel's terminal (SIGINT to its process group: npx and the CLI) puts the agent's previous step
  // back. npx itself dies of the signal, so its exit status says nothing about the CLI's; the CLI's words and the
  // agent's configuration do.
  process.kill(-tunnel.proc.pid!, 'SIGINT')
  await tunnel.exited
  t.match(tunnel.output(), /tunnel closed; webhook URL restored to none/, 'the tunnel restored the previous agent step')
  const agentId = /created agent (agt_\S+)/.exec(init.output)![1]
  const agent = (await (await fetch(`${gatewayUrl}/v1/agents/${agentId}`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
    config: { plugins: { use: string }[] }
  }
  t.notOk(
    agent.config.plugins.some((p) => p.use === 'agent.webhook'),
    'the agent is back on its built-in step',
  )
})
