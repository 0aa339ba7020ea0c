/**
 * Three gateway replicas on one Postgres server behind nginx round-robin (WebSockets included), PUBLIC_URL the
 * balancer's: carrier calls whose voice hook, media stream and status callbacks land on different replicas, and
 * browser sessions authorized on one and connected on another.
 */
import t from 'tap'
import { toolSkip } from '../helpers/tool-required.js'
import { postSignedForm } from '../fakes/carrier/sign.js'
import { newCallSid, placeCall, type SimulatedCall } from '../fakes/carrier/phone-simulator.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { freePort, hasNginx, startNginx } from '../helpers/nginx.js'
import { connectBrowser } from '../helpers/ws-client.js'
import { eventually, newTenant, sessionOfCall, startCarrierGateway } from './carrier-setup.js'

const onServer = process.env.DATABASE_URL !== undefined
const skip = !onServer
  ? 'needs DATABASE_URL: replicas share one Postgres server'
  : toolSkip(hasNginx() ? false : 'needs nginx (/usr/sbin/nginx)')
t.setTimeout(240_000)

t.test('behind nginx round-robin: calls and browser sessions cross replicas', { skip }, async (t) => {
  const port = await freePort()
  const publicUrl = `http://127.0.0.1:${port}`
  const b = await startCarrierGateway({ PUBLIC_URL: publicUrl })
  t.teardown(() => b.gw.close())
  const env = { DATABASE_URL: b.gw.db.options.databaseUrl!, PUBLIC_URL: publicUrl, ADMIN_TOKEN: '', ALLOW_INSECURE_WEBHOOKS: '1' }
  const children = await Promise.all([spawnGateway(env), spawnGateway(env)])
  for (const c of children) t.teardown(() => c.kill('SIGKILL'))
  const replicas = [b.gw.url, ...children.map((c) => c.url)].map((u) => new URL(u).host)
  const lb = await startNginx(port, replicas)
  t.teardown(() => lb.close())

  const token = 'balancer-token'
  const tenant = await newTenant(b, { carrier: { authToken: token } })
  const hookUrl = `${publicUrl}/v1/agents/carrier/twiml`
  const statusUrl = `${publicUrl}/v1/agents/carrier/status`

  // Sequential requests alternate over the three replicas: each call's media stream lands on another replica
  // than its voice hook, and its status callback on another again.
  const calls: { callSid: string; call: SimulatedCall; owner: string | null; key: string | undefined }[] = []
  for (let i = 0; i < 4; i++) {
    const callSid = newCallSid()
    const r = await placeCall({
      voiceHookUrl: hookUrl,
      authToken: token,
      from: '+442071838750',
      to: tenant.number,
      callSid,
      realtime: false,
    })
    t.equal(r.outcome, 'connected', `call ${i + 1} connected through the balancer (signature checked against PUBLIC_URL)`)
    if (r.outcome !== 'connected') return
    const row = await eventually(async () => {
      const s = await sessionOfCall(b, callSid)
      return s?.status === 'connected' ? s : undefined
    }, 10_000)
    const key = /websocket\/([^"<?]+)/.exec(r.markup)?.[1]
    calls.push({ callSid, call: r.call, owner: row.lease_owner, key })
  }
  t.ok(new Set(calls.map((c) => c.owner)).size >= 2, 'the calls run on more than one replica')

  for (const c of calls) {
    const status = await postSignedForm({
      postTo: statusUrl,
      signedUrl: statusUrl,
      form: { CallSid: c.callSid, CallStatus: 'completed', AccountSid: `AC${'0'.repeat(32)}` },
      authToken: token,
    })
    t.equal(status.status, 204)
  }
  for (const c of calls) {
    const row = await eventually(async () => {
      const s = await sessionOfCall(b, c.callSid)
      return s?.status === 'ended' ? s : undefined
    }, 10_000)
    t.equal(row.end_reason, 'caller_hangup', 'its status callback ended it wherever it ran')
    t.equal((await c.call.ended).by, 'server')
  }

  // Who answered what, as nginx saw it: the streams have closed, so their lines are written too.
  const log = await eventually(async () => {
    const lines = lb.accessLog()
    return calls.every((c) => lines.some((l) => l.uri.endsWith(`/${c.key}`))) ? lines : undefined
  })
  const hooks = log.filter((l) => l.uri === '/v1/agents/carrier/twiml')
  const statuses = log.filter((l) => l.uri === '/v1/agents/carrier/status')
  t.equal(hooks.length, calls.length)
  calls.forEach((c, i) => {
    const stream = log.find((l) => l.uri.endsWith(`/${c.key}`))
    t.not(stream?.upstream, hooks[i]?.upstream, `call ${i + 1}: voice hook on ${hooks[i]?.upstream}, media stream on ${stream?.upstream}`)
  })
  t.ok(
    calls.some((c, i) => statuses[i]?.upstream !== log.find((l) => l.uri.endsWith(`/${c.key}`))?.upstream),
    'a status callback landed on another replica than its call',
  )

  // Browser sessions: authorized through the balancer on one replica, connected on the next.
  const org = await b.gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'lb-browser' } })
  const agent = await b.gw.request('POST', '/v1/agents', { key: org.body.api_key, body: {} })
  const owners = new Set<string | null>()
  for (let i = 0; i < 3; i++) {
    const auth = await fetch(`${publicUrl}/v1/agents/web/authorize_session`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.body.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: agent.body.id }),
    })
    t.equal(auth.status, 200)
    const { client_session_key: key, conversation_id: conversationId } = (await auth.json()) as Record<string, string>
    const ws = await connectBrowser(publicUrl, key)
    t.ok(ws.ok, `browser session ${i + 1} connected through the balancer`)
    const row = await b.gw.store.db
      .selectFrom('sessions')
      .select('lease_owner')
      .where('conversation_id', '=', conversationId!)
      .executeTakeFirstOrThrow()
    owners.add(row.lease_owner)
    if (ws.ok) ws.ws.close()
  }
  t.ok(owners.size >= 2, 'browser sessions ran on more than one replica')
})
