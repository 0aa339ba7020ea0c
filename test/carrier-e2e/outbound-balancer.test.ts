/**
 * An outbound call through nginx: initiate_outbound lands on one replica, and the carrier's voice hook and status
 * callbacks, posted to PUBLIC_URL (the balancer), land on the other. Two replicas make nginx's round robin
 * alternate, so the call's requests (initiate, initiated, ringing, voice hook, ...) take turns deterministically.
 */
import t from 'tap'
import { toolSkip } from '../helpers/tool-required.js'
import { FakeCallsApi } from '../fakes/carrier/fake-calls-api.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { freePort, hasNginx, startNginx } from '../helpers/nginx.js'
import { eventually, newTenant, sessionOfCall, startCarrierGateway } from './carrier-setup.js'

const onServer = process.env.DATABASE_URL !== undefined
const skip = !onServer
  ? 'needs DATABASE_URL: replicas share one Postgres server'
  : toolSkip(hasNginx() ? false : 'needs nginx (/usr/sbin/nginx)')
t.setTimeout(120_000)

const HOOK = '/v1/agents/carrier/twiml'
const STATUS = '/v1/agents/carrier/status'

t.test('an outbound call initiated on one replica: its voice hook and status callbacks land on another', { skip }, async (t) => {
  const port = await freePort()
  const publicUrl = `http://127.0.0.1:${port}`
  // The in-process gateway only sets up tenants; it is not behind the balancer.
  const setup = await startCarrierGateway({ PUBLIC_URL: publicUrl })
  t.teardown(() => setup.gw.close())
  const env = { DATABASE_URL: setup.gw.db.options.databaseUrl!, PUBLIC_URL: publicUrl, ADMIN_TOKEN: '', ALLOW_INSECURE_WEBHOOKS: '1' }
  const replicas = await Promise.all([spawnGateway(env), spawnGateway(env)])
  for (const r of replicas) t.teardown(() => r.kill('SIGKILL'))
  const lb = await startNginx(
    port,
    replicas.map((r) => new URL(r.url).host),
  )
  t.teardown(() => lb.close())

  const api = await FakeCallsApi.start({ stepMs: 5 })
  t.teardown(() => api.close())
  api.outcome = { kind: 'answer', realtime: false }
  const tenant = await newTenant(setup, { carrier: { authToken: api.authToken, api } })

  const initiate = `/v1/agents/${tenant.agentId}/calls/initiate_outbound`
  const res = await fetch(`${publicUrl}${initiate}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ from_phone_number: tenant.number, to_phone_number: '+12025550143' }),
  })
  t.equal(res.status, 200, 'initiate_outbound answered through the balancer')
  const placed = (await res.json()) as { call_sid: string; session_id: string }
  const call = api.calls.get(placed.call_sid)
  t.ok(call, 'the carrier got the call')
  if (call === undefined) return
  t.match(call.params, { url: `${publicUrl}${HOOK}`, statusCallback: `${publicUrl}${STATUS}` }, 'its webhooks point at the balancer')

  const phone = await eventually(async () => {
    const answered = call.phone
    return answered?.outcome === 'connected' ? answered : undefined
  }, 10_000)
  const connected = await eventually(async () => {
    const s = await sessionOfCall(setup, placed.call_sid)
    return s?.status === 'connected' ? s : undefined
  }, 10_000)
  t.equal(connected.id, placed.session_id, 'the session initiate_outbound created is the one connected')
  t.ok(
    replicas.some((r) => r.leaseOwner === connected.lease_owner),
    'it runs on a replica behind the balancer',
  )
  await phone.call.hangup()
  t.equal(await call.done, 'completed', 'the carrier completed the call')
  const ended = await eventually(async () => {
    const s = await sessionOfCall(setup, placed.call_sid)
    return s?.status === 'ended' && s.call_status === 'completed' ? s : undefined
  }, 10_000)
  t.equal(ended.end_reason, 'caller_hangup', 'the call ended as the callee hung up')
  t.ok(
    call.callbacks.every((cb) => cb.reply === 204),
    `every status callback accepted (${call.callbacks.map((cb) => `${cb.callStatus}: ${cb.reply}`).join(', ')})`,
  )

  // Who answered what, as nginx saw it; the media stream's line is written when it closes.
  const log = await eventually(async () => {
    const lines = lb.accessLog()
    return lines.some((l) => l.uri.startsWith('/v1/agents/carrier/websocket/')) &&
      lines.filter((l) => l.uri === STATUS).length === call.callbacks.length
      ? lines
      : undefined
  })
  const initiated = log.filter((l) => l.uri === initiate)
  const hooks = log.filter((l) => l.uri === HOOK)
  const statuses = log.filter((l) => l.uri === STATUS)
  t.equal(initiated.length, 1, 'one initiate_outbound in the access log')
  t.equal(hooks.length, 1, 'one voice hook in the access log')
  const initiatedOn = initiated[0]?.upstream
  t.ok(initiatedOn, `initiate_outbound answered by ${initiatedOn}`)
  t.not(hooks[0]?.upstream, initiatedOn, `the voice hook answered by another replica (${hooks[0]?.upstream})`)
  t.ok(
    statuses.some((l) => l.upstream !== initiatedOn),
    `status callbacks answered by ${statuses.map((l) => l.upstream).join(', ')}: not all by the initiating replica`,
  )
  t.ok(
    [...initiated, ...hooks, ...statuses].every((l) => l.status < 300 && l.tried.length === 1),
    'every request answered by the first replica nginx chose',
  )
})
