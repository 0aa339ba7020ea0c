import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

// What `npm start` runs, as a newcomer runs it: bin/voxgate.js brings the dist/ bundle up to date and starts it on
// a fresh embedded database. The first-start message ends with the demo link, and the bundle finds the demo page,
// the migrations and the PGlite template as the sources do.
const root = fileURLToPath(new URL('../..', import.meta.url))
// package.json's start script as Node's arguments: "node <options> bin/voxgate.js serve".
const startArgs = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
  .split(' ')
  .slice(1)
const dataDir = mkdtempSync(join(tmpdir(), 'voxgate-npm-start-'))
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))

t.test('bin/voxgate.js serve: first start on a fresh data dir, then a restart', async (t) => {
  const run = async () => {
    const { DATABASE_URL: _server, ...inherited } = process.env
    const env = { ...inherited, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info' }
    const child = spawn(process.execPath, startArgs, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString()
        const listening = /"url":"(http:\/\/[^"]+)"[^\n]*voxgate listening|voxgate listening[^\n]*"url":"(http:\/\/[^"]+)"/.exec(out)
        if (listening) resolve((listening[1] ?? listening[2]) as string)
      })
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}${err}`)))
    })
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    return { child, url, out: () => out, err: () => err, exited }
  }

  const first = await run()
  t.equal((await fetch(`${first.url}/readyz`)).status, 200)
  const page = await fetch(`${first.url}/`)
  t.equal(page.status, 200, 'the demo page is served from the bundle')
  t.match(await page.text(), /voxgate voice agent demo/)
  const link = /Talk to your agent: (http:\/\/\S+#link=(vxl_\S+))/.exec(first.out())
  t.ok(link, 'the first-start message ends with the demo link')
  t.notMatch(first.err(), /running the TypeScript sources through tsx/, 'ran the bundle, not the tsx fallback')
  t.notMatch(first.out(), /started without the gateway's options/, 'npm start gives Node the gateway options')
  const authorized = await fetch(`${first.url}/v1/agent_links/authorize_session`, {
    method: 'POST',
    headers: { authorization: `Bearer ${link?.[2]}`, 'content-type': 'application/json' },
    body: '{}',
  })
  t.equal(authorized.status, 200, 'the printed link authorizes a session')
  first.child.kill('SIGTERM')
  t.equal(await first.exited, 0, 'SIGTERM: a clean exit')

  const second = await run()
  t.equal((await fetch(`${second.url}/readyz`)).status, 200)
  t.notMatch(second.out(), /first start/, 'a restart creates nothing')
  second.child.kill('SIGTERM')
  t.equal(await second.exited, 0)
})
