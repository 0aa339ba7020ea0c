/**
 * `voxgate login` end to end: the CLI (bin/voxgate.js) prints a code and a URL; headless Chromium opens that URL,
 * signs in (the admin token, then picks an organization; or an organization API key), sees the same code and
 * approves; the CLI stores a key of its own (mode 0600) that works, `whoami` names the organization, `logout`
 * revokes it. An expired code and a reused one are refused.
 */
import t from 'tap'
import { toolSkip } from '../helpers/tool-required.js'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser } from 'playwright-core'
import { ADMIN_TOKEN, startTestGateway } from '../helpers/gateway.js'
import { runCli, spawnCli, tempConfigHome } from '../helpers/run-cli.js'
import { freePort } from '../helpers/nginx.js'
import { CHROMIUM, skipReason } from '../browser-e2e/e2e-harness.js'

t.setTimeout(240_000)
const skip = toolSkip(skipReason())

const port = await freePort()
const gw = await startTestGateway({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` })
t.teardown(() => gw.close())
const org = (await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'Login Org' } })).body

let browser: Browser | undefined
async function page() {
  browser ??= await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  })
  return browser.newPage()
}
t.teardown(() => browser?.close())

function startLogin(xdg: string) {
  const cli = spawnCli(['login', '--gateway', gw.url], { env: { XDG_CONFIG_HOME: xdg } })
  t.teardown(() => cli.proc.kill('SIGKILL'))
  return cli
}

t.test('admin token, pick the organization, approve: the CLI ends with a working key; whoami; logout revokes it', { skip }, async (t) => {
  const xdg = tempConfigHome()
  const cli = startLogin(xdg)
  const [, code, url] = (await cli.waitFor(/Your code: ([A-Z]{4}-[A-Z]{4})\n[\s\S]*?\n {2}(http\S+)/)) as unknown as string[]
  t.equal(url, `${gw.config.publicUrl}/console/device?code=${code}`)

  const p = await page()
  await p.goto(url as string)
  await p.fill('#signin-admin-token', ADMIN_TOKEN)
  await p.click('#signin-submit')
  await p.selectOption('#org-picker', org.id)
  await p.click('#org-continue')
  await p.waitForSelector('#device-approve')
  t.equal((await p.textContent('#device-code'))?.trim(), code, 'the page shows the code the terminal shows')
  await p.click('#device-approve')
  await p.locator('#device-result', { hasText: /Approved/ }).waitFor()

  t.equal(await cli.exited, 0, cli.stderr())
  t.match(cli.stdout(), `Signed in to ${gw.url} for organization Login Org (${org.id})`)
  const file = join(xdg, 'voxgate', 'config.json')
  t.equal(statSync(file).mode & 0o777, 0o600, 'the config file is mode 0600')
  const stored = JSON.parse(readFileSync(file, 'utf8'))
  t.match(stored, { gateway: gw.url, organization_id: org.id, organization_name: 'Login Org', key_id: /^key_/, api_key: /^vgk_/ })
  t.not(stored.api_key, org.api_key, 'a key of its own, not the one used to create the organization')
  const agents = await gw.request('GET', '/v1/agents', { key: stored.api_key })
  t.equal(agents.status, 200, 'the key works')

  // The stored login is what later commands use.
  const who = await runCli(['whoami'], { env: { XDG_CONFIG_HOME: xdg } })
  t.equal(who.code, 0, who.stderr)
  t.match(who.stdout, `gateway: ${gw.url}\norganization: Login Org (${org.id})\nkey: ${stored.key_id}`)
  const init = await runCli(['init', join(xdg, 'project')], { env: { XDG_CONFIG_HOME: xdg } })
  t.equal(init.code, 0, 'init signs in with the stored key')

  const out = await runCli(['logout'], { env: { XDG_CONFIG_HOME: xdg } })
  t.equal(out.code, 0, out.stderr)
  t.match(out.stdout, /Signed out: key key_\S+ revoked/)
  t.equal((await gw.request('GET', '/v1/agents', { key: stored.api_key })).status, 400, 'the revoked key is refused')
  t.throws(() => statSync(file), 'the stored login is gone')
  const whoAfter = await runCli(['whoami', '--gateway', gw.url], { env: { XDG_CONFIG_HOME: xdg, VOXGATE_API_KEY: '' } })
  t.equal(whoAfter.code, 1)
  t.match(whoAfter.stderr, /not signed in/)
  const whoRevoked = await runCli(['whoami', '--gateway', gw.url, '--api-key', stored.api_key])
  t.equal(whoRevoked.code, 1)
  t.match(whoRevoked.stderr, /not valid/)

  // The same code again on the page: used, refused.
  const again = await page()
  await again.goto(url as string)
  await again.fill('#signin-key', org.api_key)
  await again.click('#signin-submit')
  await again.waitForSelector('#device-approve')
  await again.click('#device-approve')
  await again.locator('#device-result', { hasText: /expired|used|no pending/i }).waitFor()
  t.pass('a used code cannot be approved again')
})

t.test('an organization API key signs in directly', { skip }, async (t) => {
  const xdg = tempConfigHome()
  const cli = startLogin(xdg)
  const [, code, url] = (await cli.waitFor(/Your code: ([A-Z]{4}-[A-Z]{4})\n[\s\S]*?\n {2}(http\S+)/)) as unknown as string[]
  const p = await page()
  await p.goto(url as string)
  await p.fill('#signin-key', org.api_key)
  await p.click('#signin-submit')
  await p.waitForSelector('#device-approve')
  t.equal((await p.textContent('#device-code'))?.trim(), code)
  await p.click('#device-approve')
  t.equal(await cli.exited, 0, cli.stderr())
  t.match(cli.stdout(), `organization Login Org (${org.id})`)
})

t.test('an expired code: the CLI says so and exits 1; the page cannot approve it', { skip }, async (t) => {
  const cli = startLogin(tempConfigHome())
  const [, code, url] = (await cli.waitFor(/Your code: ([A-Z]{4}-[A-Z]{4})\n[\s\S]*?\n {2}(http\S+)/)) as unknown as string[]
  // Ten minutes pass (the server's expiry, moved instead of waited for).
  await gw.store.db
    .updateTable('device_authorizations')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('user_code', '=', (code as string).replace('-', ''))
    .execute()
  t.equal(await cli.exited, 1)
  t.match(cli.stderr(), /the code expired/)
  const p = await page()
  await p.goto(url as string)
  await p.fill('#signin-key', org.api_key)
  await p.click('#signin-submit')
  await p.waitForSelector('#device-approve')
  await p.click('#device-approve')
  await p.locator('#device-result', { hasText: /expired|used|no pending/i }).waitFor()
  t.pass('the expired code is refused on the page')
})

t.test('Deny on the page: the CLI says so and exits 1, nothing is stored', { skip }, async (t) => {
  const xdg = tempConfigHome()
  const cli = startLogin(xdg)
  const [, , url] = (await cli.waitFor(/Your code: ([A-Z]{4}-[A-Z]{4})\n[\s\S]*?\n {2}(http\S+)/)) as unknown as string[]
  const p = await page()
  await p.goto(url as string)
  await p.fill('#signin-key', org.api_key)
  await p.click('#signin-submit')
  await p.waitForSelector('#device-deny')
  await p.click('#device-deny')
  await p.locator('#device-result', { hasText: /Denied/ }).waitFor()
  t.equal(await cli.exited, 1)
  t.match(cli.stderr(), /denied/)
  t.throws(() => statSync(join(xdg, 'voxgate', 'config.json')), 'no login stored')
})

t.test('a device code is redeemed once', async (t) => {
  const start = await gw.request('POST', '/v1/cli/device_authorizations', { key: null, body: { client_name: 'reuse' } })
  const approve = await gw.request('POST', '/v1/cli/device_authorizations/approve', {
    key: org.api_key,
    body: { user_code: start.body.user_code },
  })
  t.equal(approve.status, 200)
  const first = await gw.request('POST', '/v1/cli/device_authorizations/token', {
    key: null,
    body: { device_code: start.body.device_code },
  })
  t.equal(first.status, 200)
  const second = await gw.request('POST', '/v1/cli/device_authorizations/token', {
    key: null,
    body: { device_code: start.body.device_code },
  })
  t.equal(second.status, 400)
  t.equal(second.body.code, 'invalid_grant', 'a reused code is refused')
})

t.test('login usage: --help 0, unknown option 2', async (t) => {
  for (const cmd of ['login', 'logout', 'whoami']) {
    const help = await runCli([cmd, '--help'])
    t.equal(help.code, 0, `${cmd} --help`)
    t.match(help.stdout, `usage: voxgate ${cmd}`)
    const bad = await runCli([cmd, '--bogus'])
    t.equal(bad.code, 2, `${cmd} --bogus`)
  }
  const top = await runCli(['--help'])
  t.equal(top.code, 0)
  for (const cmd of ['serve', 'login', 'logout', 'whoami', 'init', 'tunnel'])
    t.match(top.stdout, new RegExp(`\\n  ${cmd} `), `voxgate --help lists ${cmd}`)
  const serveHelp = await runCli(['serve', '--help'])
  t.equal(serveHelp.code, 0)
  const notSignedIn = await runCli(['logout'])
  t.equal(notSignedIn.code, 0)
  t.match(notSignedIn.stdout, /Not signed in/)
})
