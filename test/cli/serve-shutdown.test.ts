/**
 * `voxgate serve` as a real process: SIGTERM drains (readiness 503 at once, live sessions go on until they end
 * or SHUTDOWN_GRACE_MS passes, then session.end), a second signal exits at once, and a closed stdout pipe
 * neither crashes nor stops it.
 */
import t from 'tap'
import { testDb } from '../helpers/db.js'
import { ADMIN_TOKEN } from '../helpers/gateway.js'
import { spawnServe, type ServeProcess } from '../helpers/spawn-serve.js'
import { startWebhookReceiver } from '../helpers/webhook-receiver.js'
import { closed, connectBrowser } from '../helpers/ws-client.js'
import { placeCall } from '../fakes/carrier/phone-simulator.js'

// Each test starts a real `voxgate serve` (tsx, a database of its own): seconds each on a busy machine.
t.setTimeout(300_000)
const receiver = await startWebhookReceiver()
t.teardown(() => receiver.close())

/** The environment of a served gateway on a database of its own (a server database, or a fresh embedded one). */
async function serveEnv(t: { teardown(fn: () => unknown): void }, env: Record<string, string>): Promise<Record<string, string>> {
  const base = { ADMIN_TOKEN, ALLOW_INSECURE_WEBHOOKS: '1', ...env }
  if (process.env.DATABASE_URL === undefined) return base
  const db = await testDb()
  // The served process opens the database itself; this handle only makes and drops it.
  t.teardown(() => db.cleanup())
  return { ...base, DATABASE_URL: db.options.databaseUrl! }
}

async function call(g: ServeProcess, method: string, path: string, key: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(g.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}

/** An organization with an agent whose session.end goes to the receiver; returns a way to get session keys. */
async function tenant(g: ServeProcess, tag: string) {
  const org = await call(g, 'POST', '/admin/v1/organizations', ADMIN_TOKEN, { name: tag })
  if (org.status !== 201) throw new Error(JSON.stringify(org.body))
  const key = org.body.api_key as string
  const agent = (await call(g, 'POST', '/v1/agents', key, {})).body
  const config = { ...agent.config, session_webhook: { url: `${receiver.url}/${tag}`, events: ['session.end'] } }
  const updated = await call(g, 'POST', `/v1/agents/${agent.id}`, key, { config })
  if (updated.status !== 200) throw new Error(JSON.stringify(updated.body))
  const authorize = async () => {
    const r = await call(g, 'POST', '/v1/agents/web/authorize_session', key, { agent_id: agent.id })
    return r.body.client_session_key as string
  }
  return Object.assign(authorize, { apiKey: key, agentId: agent.id as string, orgId: org.body.id as string })
}

/** Polls readiness until it says 503 (the signal reaches the process asynchronously). */
async function notReady(g: ServeProcess): Promise<number> {
  for (;;) {
    const status = await fetch(`${g.url}/readyz`).then(
      (r) => r.status,
      () => 0,
    )
    if (status === 503) return status
    await new Promise((r) => setTimeout(r, 20))
  }
}

t.test('SIGTERM: readiness 503 at once, live sessions go on for the grace period, then session.end', async (t) => {
  // Started as `node bin/voxgate.js serve` is, without the options npm start gives: it says so once it listens.
  const g = await spawnServe(await serveEnv(t, { SHUTDOWN_GRACE_MS: '2000' }), { nodeOptions: [] })
  t.teardown(() => g.proc.kill('SIGKILL'))
  const key = await tenant(g, 'drain')
  const live = await connectBrowser(g.url, await key())
  t.ok(live.ok, 'a live session')
  if (!live.ok) return
  const wsClosed = closed(live.ws)
  const laterKey = await key()
  g.proc.kill('SIGTERM')
  t.equal(await notReady(g), 503, '/readyz says 503')
  t.equal(live.ws.readyState, live.ws.OPEN, 'the live session goes on while draining')
  const refused = await connectBrowser(g.url, laterKey)
  t.equal(refused.ok ? 200 : refused.status, 503, 'a new session is refused while draining')
  t.equal(live.ws.readyState, live.ws.OPEN, 'the live session still goes on')
  t.same(await wsClosed, { code: 1001, reason: 'shutdown' }, 'ended once the grace period passed')
  const end = await receiver.waitFor((r) => r.path === '/drain' && r.json?.type === 'session.end')
  t.equal(end.json.end_reason, 'shutdown', 'session.end says why')
  t.same(await g.exited, { code: 0, signal: null }, 'a clean exit')
  t.match(
    g.stdout(),
    /"node_options":\["--v8-pool-size=1"\][^\n]*started without the gateway's options/,
    'warned of the missing Node options',
  )
})

t.test('a drain ends as soon as the last live session does', async (t) => {
  // A grace period far longer than the test may take: the exit must not wait for it.
  const g = await spawnServe(await serveEnv(t, { SHUTDOWN_GRACE_MS: '600000' }))
  t.teardown(() => g.proc.kill('SIGKILL'))
  const key = await tenant(g, 'natural')
  const live = await connectBrowser(g.url, await key())
  t.ok(live.ok)
  if (!live.ok) return
  g.proc.kill('SIGTERM')
  await notReady(g)
  live.ws.close()
  t.same(await g.exited, { code: 0, signal: null }, 'exited when the session ended')
  const end = await receiver.waitFor((r) => r.path === '/natural' && r.json?.type === 'session.end')
  t.equal(end.json.end_reason, 'client_disconnected')
})

t.test('a second signal ends the process at once (SIGINT, then SIGTERM)', async (t) => {
  const g = await spawnServe(await serveEnv(t, { SHUTDOWN_GRACE_MS: '600000' }))
  t.teardown(() => g.proc.kill('SIGKILL'))
  const key = await tenant(g, 'twice')
  const live = await connectBrowser(g.url, await key())
  t.ok(live.ok)
  g.proc.kill('SIGINT')
  t.equal(await notReady(g), 503, 'SIGINT drains as SIGTERM does')
  g.proc.kill('SIGTERM')
  t.same(await g.exited, { code: 1, signal: null }, 'exited without waiting for the grace period')
  if (live.ok) live.ws.terminate()
})

t.test('a closed stdout pipe: first start survives it, browser and phone sessions are served, SIGTERM still ends it', async (t) => {
  const g = await spawnServe(await serveEnv(t, { SHUTDOWN_GRACE_MS: '1000', LOG_LEVEL: 'trace' }), { closedStdout: true })
  t.teardown(() => g.proc.kill('SIGKILL'))
  // The first-start message (the default organization's key) went into the closed pipe, and every log line since.
  const key = await tenant(g, 'epipe')
  for (let i = 0; i < 3; i++) {
    const s = await connectBrowser(g.url, await key())
    t.ok(s.ok, `session ${i + 1} served`)
    if (s.ok) {
      const c = closed(s.ws)
      s.ws.close()
      await c
    }
  }
  const live = await connectBrowser(g.url, await key())
  t.ok(live.ok, 'a live browser session at SIGTERM')
  // And a live phone call (no carrier credentials stored: its voice hook is accepted unsigned).
  const number = '+14155550142'
  t.equal(
    (await call(g, 'PUT', `/admin/v1/organizations/${key.orgId}/phone_numbers/${encodeURIComponent(number)}`, ADMIN_TOKEN)).status,
    201,
  )
  const assigned = await call(g, 'POST', `/v1/agents/${key.agentId}/phone_numbers`, key.apiKey, { phone_number: number })
  t.equal(assigned.status, 201)
  const phone = await placeCall({
    voiceHookUrl: `${g.url}/v1/agents/carrier/twiml`,
    from: '+442071838750',
    to: number,
    realtime: false,
  })
  t.equal(phone.outcome, 'connected', 'a live phone call at SIGTERM')
  t.equal(g.proc.exitCode, null, 'still running')
  g.proc.kill('SIGTERM')
  if (phone.outcome === 'connected') t.equal((await phone.call.ended).by, 'server', 'the call was ended by the gateway')
  t.same(await g.exited, { code: 0, signal: null }, 'exited cleanly on SIGTERM')
  t.notMatch(g.stderr(), /EPIPE|Unhandled/, 'no crash report')
})

t.test('closed stdout, a live session, two SIGTERMs at once (a group signal plus npm forwarding it): the process exits', async (t) => {
  // Trace logging keeps lines buffered for the exit flush, which must give them up instead of retrying EPIPE.
  const g = await spawnServe(await serveEnv(t, { SHUTDOWN_GRACE_MS: '600000', LOG_LEVEL: 'trace' }), { closedStdout: true })
  t.teardown(() => g.proc.kill('SIGKILL'))
  const key = await tenant(g, 'epipe-twice')
  const live = await connectBrowser(g.url, await key())
  t.ok(live.ok, 'a live session')
  const sentAt = Date.now()
  g.proc.kill('SIGTERM')
  // Two signals sent back to back can merge into one pending signal: the second follows the first's effect.
  await notReady(g)
  g.proc.kill('SIGTERM')
  const hung = setTimeout(() => g.proc.kill('SIGKILL'), 30_000)
  const e = await g.exited
  clearTimeout(hung)
  t.same(e, { code: 1, signal: null }, `exited at once, not after the grace period (${Date.now() - sentAt} ms)`)
  t.notMatch(g.stderr(), /EPIPE|Unhandled/, 'no crash report')
  if (live.ok) live.ws.terminate()
})
