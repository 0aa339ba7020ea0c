/**
 * Two gateway processes on one Postgres server: an action that lands on one replica for a call living on the
 * other reaches it through the command bus (LISTEN/NOTIFY).
 */
import t from 'tap'
import { postSignedForm } from '../fakes/carrier/sign.js'
import { readMarkup } from '../fakes/carrier/markup-reader.js'
import { newCallSid, placeCall, SimulatedCall } from '../fakes/carrier/phone-simulator.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { closed, connectBrowser } from '../helpers/ws-client.js'
import { eventually, newTenant, PUBLIC_URL, sessionOfCall, startCarrierGateway } from './carrier-setup.js'

const onServer = process.env.DATABASE_URL !== undefined

t.test(
  'a final status callback sent to replica B ends a call connected on replica A',
  { skip: !onServer && 'needs DATABASE_URL: two gateway processes share one Postgres server' },
  async (t) => {
    const b = await startCarrierGateway()
    t.teardown(() => b.gw.close())
    const a = await spawnGateway({
      DATABASE_URL: b.gw.db.options.databaseUrl!,
      PUBLIC_URL,
      ADMIN_TOKEN: '',
      ALLOW_INSECURE_WEBHOOKS: '1',
    })
    t.teardown(() => a.kill('SIGKILL'))
    const token = 'cross-replica-token'
    const tenant = await newTenant(b, { carrier: { authToken: token } })
    const callSid = newCallSid()
    const wsA = a.url.replace(/^http/, 'ws')
    const r = await placeCall({
      voiceHookUrl: `${a.url}/v1/agents/carrier/twiml`,
      publicUrl: b.hookUrl,
      authToken: token,
      from: '+442071838750',
      to: tenant.number,
      callSid,
      realtime: false,
      rewriteUrl: (url) => url.replace(PUBLIC_URL.replace(/^https/, 'wss'), wsA),
    })
    t.equal(r.outcome, 'connected', 'the call connected on replica A')
    if (r.outcome !== 'connected') return
    const live = await eventually(async () => {
      const s = await sessionOfCall(b, callSid)
      return s?.status === 'connected' ? s : undefined
    }, 10_000)
    t.not(live.lease_owner, b.gw.gateway.sessions.keeper.owner, 'the session lives on replica A, not B')

    const status = await postSignedForm({
      postTo: b.rewrite(b.statusUrl),
      signedUrl: b.statusUrl,
      form: { CallSid: callSid, CallStatus: 'completed', AccountSid: `AC${'0'.repeat(32)}` },
      authToken: token,
    })
    t.equal(status.status, 204, 'replica B accepted the status callback')
    const row = await eventually(async () => {
      const s = await sessionOfCall(b, callSid)
      return s?.status === 'ended' ? s : undefined
    }, 10_000)
    t.equal(row.end_reason, 'caller_hangup', 'ended as a caller hangup by its own replica')
    t.equal(row.lease_expires_at, null, 'its slot is free')
    const end = await r.call.ended
    t.equal(end.by, 'server', 'replica A closed the media stream')
  },
)

t.test(
  'an API end sent to replica B closes a browser session connected on replica A',
  { skip: !onServer && 'needs DATABASE_URL: two gateway processes share one Postgres server' },
  async (t) => {
    const b = await startCarrierGateway()
    t.teardown(() => b.gw.close())
    const a = await spawnGateway({ DATABASE_URL: b.gw.db.options.databaseUrl!, ADMIN_TOKEN: '', ALLOW_INSECURE_WEBHOOKS: '1' })
    t.teardown(() => a.kill('SIGKILL'))
    const agent = (await b.gw.request('POST', '/v1/agents', { body: {} })).body
    const auth = (await b.gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agent.id } })).body
    const ws = await connectBrowser(a.url, auth.client_session_key)
    t.ok(ws.ok, 'connected on replica A')
    if (!ws.ok) return
    const wsClosed = closed(ws.ws)
    const row = await b.gw.store.db
      .selectFrom('sessions')
      .selectAll()
      .where('conversation_id', '=', auth.conversation_id)
      .executeTakeFirstOrThrow()
    const res = await b.gw.request('POST', `/v1/agents/${agent.id}/sessions/${row.id}/end`)
    t.equal(res.status, 202, 'replica B accepted the end')
    t.equal((await wsClosed).code, 1000, 'replica A closed the socket')
    const ended = await eventually(async () => {
      const s = await b.gw.store.db.selectFrom('sessions').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow()
      return s.status === 'ended' ? s : undefined
    })
    t.equal(ended.end_reason, 'hangup')
  },
)

t.test('a draining replica refuses a new call with a retryable 503 and still connects the media stream of one it admitted', async (t) => {
  const { c, tenant, token, callSid, form, connect } = await admittedCall(t, 'drain-token')
  t.ok(connect, 'the call was admitted')
  if (connect?.verb !== 'Connect') return
  c.gw.gateway.sessions.drain()
  const refusedSid = newCallSid()
  const refusedHook = await postSignedForm({
    postTo: c.rewrite(c.hookUrl),
    signedUrl: c.hookUrl,
    form: { ...form, CallSid: refusedSid },
    authToken: token,
  })
  t.equal(refusedHook.status, 503, 'a new call is refused while draining, with a status a balancer or carrier retries')
  t.equal(refusedHook.retryAfter, '1')
  t.match(JSON.parse(refusedHook.body), { code: 'shutting_down', error: /draining/ }, "the SPEC's error body")
  t.equal(await sessionOfCall(c, refusedSid), undefined, 'the refused call left no session: a retry elsewhere starts afresh')

  // The REST API keeps serving; a browser session (authorized anywhere) gets a retryable 503 for its upgrade.
  const auth = await c.gw.request('POST', '/v1/agents/web/authorize_session', { key: tenant.apiKey, body: { agent_id: tenant.agentId } })
  t.equal(auth.status, 200, 'authorize_session still answers while draining')
  const browser = await connectBrowser(c.gw.url, auth.body.client_session_key)
  t.same(browser.ok ? 101 : [browser.status, browser.retryAfter], [503, '1'], 'the browser upgrade is refused with 503 and Retry-After')
  const unused = await c.gw.store.db
    .selectFrom('sessions')
    .select(['status', 'key_used_at'])
    .where('conversation_id', '=', auth.body.conversation_id)
    .executeTakeFirstOrThrow()
  t.same(unused, { status: 'authorized', key_used_at: null }, 'its key is still good for another replica')
  const call = await SimulatedCall.connect({
    url: c.rewrite(connect.stream.url),
    callSid,
    accountSid: form.AccountSid,
    customParameters: connect.stream.parameters,
    realtime: false,
    silenceWhenIdle: false,
    playbackSpeed: Infinity,
  })
  await call.opened
  const row = await eventually(async () => {
    const s = await sessionOfCall(c, callSid)
    return s?.status === 'connected' ? s : undefined
  })
  t.equal(row.status, 'connected', 'the admitted call connected during the drain')
  await call.hangup()
})

t.test('past the grace period a draining replica refuses even an admitted call stream, leaving its key good', async (t) => {
  const { c, callSid, form, connect } = await admittedCall(t, 'closed-token')
  t.ok(connect, 'the call was admitted: its slot is held')
  if (connect?.verb !== 'Connect') return
  // The grace period is over (none here) while the server still answers: a session opened now would be cut at once.
  await c.gw.gateway.sessions.shutdown(0)
  const stream = SimulatedCall.connect({
    url: c.rewrite(connect.stream.url),
    callSid,
    accountSid: form.AccountSid,
    customParameters: connect.stream.parameters,
    realtime: false,
    silenceWhenIdle: false,
    playbackSpeed: Infinity,
  })
  await t.rejects(stream, /503/, 'the stream upgrade is refused with 503')
  const row = await sessionOfCall(c, callSid)
  t.match(row, { status: 'authorized', key_used_at: null }, 'the key is unused: another replica may take the stream')
})

/** A gateway of its own and an inbound call its voice hook admitted (its slot held, its stream not yet open). */
async function admittedCall(t: { teardown(fn: () => unknown): void }, token: string) {
  const c = await startCarrierGateway()
  t.teardown(() => c.gw.close())
  const tenant = await newTenant(c, { carrier: { authToken: token } })
  const callSid = newCallSid()
  const form = {
    AccountSid: `AC${'0'.repeat(32)}`,
    CallSid: callSid,
    CallStatus: 'ringing',
    Direction: 'inbound',
    From: '+442071838750',
    To: tenant.number,
  }
  const hook = await postSignedForm({ postTo: c.rewrite(c.hookUrl), signedUrl: c.hookUrl, form, authToken: token })
  const connect = readMarkup(hook.body).find((v) => v.verb === 'Connect')
  return { c, tenant, token, callSid, form, connect }
}
