/**
 * `response.transfer` on phone calls (an addition to the SPEC): the gateway speaks the content, asks the carrier
 * (the fake Calls API) to update the live call with `<Dial>` markup, and the session ends `transferred`; a
 * transfer the carrier refuses, or to a target that is not one, is apologised for and reported to the backend.
 */
import t from 'tap'
import { FakeCallsApi } from '../fakes/carrier/fake-calls-api.js'
import { newCallSid, placeCall } from '../fakes/carrier/phone-simulator.js'
import { postSignedForm } from '../fakes/carrier/sign.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import type { BackendReply, FakeBackend } from '../fakes/backend/fake-backend.js'
import {
  callTenant,
  type CarrierGw,
  type CarrierTenant,
  eventually,
  newBackendTenant,
  PUBLIC_URL,
  sessionOfCall,
  sse,
  startCarrierGateway,
  startVoiceWorld,
} from './carrier-setup.js'

/** The backend greets with `content` and ends the welcome with `response.transfer` carrying `fields`. */
function transferReply(turnId: string, fields: Record<string, unknown>): BackendReply {
  return { kind: 'sse', steps: [{ data: { type: 'response.transfer', turn_id: turnId, ...fields } }] }
}

async function tenantWithApi(
  t: { teardown(fn: () => unknown): void },
  c: CarrierGw,
  token: string,
): Promise<{ tenant: CarrierTenant; backend: FakeBackend; api: FakeCallsApi }> {
  const api = await FakeCallsApi.start({ authToken: token })
  t.teardown(() => api.close())
  const { tenant, backend } = await newBackendTenant(t, c, token, undefined, api)
  return { tenant, backend, api }
}

/** Places an inbound call the fake carrier knows about (so the Calls API can update it). */
async function connectedCall(c: CarrierGw, tenant: CarrierTenant, api: FakeCallsApi) {
  const callSid = newCallSid()
  const r = await callTenant(c, tenant, { callSid })
  if (r.outcome !== 'connected') throw new Error(`call not connected: ${JSON.stringify(r)}`)
  api.addInbound(callSid, r.call)
  return { callSid, call: r.call }
}

t.test('a cold transfer to a number: content spoken, <Dial><Number> markup, session ends transferred', async (t) => {
  const { c } = await startVoiceWorld(t)
  const { tenant, backend, api } = await tenantWithApi(t, c, 'transfer-token-1')
  backend.reply = (req) =>
    req.json.type === 'session.start'
      ? transferReply(req.json.turn_id, { to: '+1 (415) 555-0100', content: 'Connecting you to a colleague.', caller_id: '+14155550199' })
      : sse(req.json.turn_id, 'ok')
  const { callSid, call } = await connectedCall(c, tenant, api)
  const end = await call.ended
  t.equal(end.by, 'caller', 'the carrier ended the media stream (the call left it for the dial)')
  t.ok(call.receivedAudio().length > 0, 'the content was spoken before the transfer')
  t.equal(api.updates.length, 1, 'one call update')
  const update = api.updates[0]!
  t.equal(update.sid, callSid, 'the live call was updated')
  t.same(update.verbs, [{ verb: 'Dial', callerId: '+14155550199', targets: [{ kind: 'Number', value: '+14155550100' }] }], 'Dial markup')
  const form = api.requests.find((r) => r.path.endsWith(`/Calls/${callSid}.json`))?.form
  t.ok(
    typeof form?.Twiml === 'string' && form.Twiml.includes('<Dial callerId="+14155550199"><Number>+14155550100</Number></Dial>'),
    'Twiml form field',
  )
  const row = await eventually(async () => {
    const s = await sessionOfCall(c, callSid)
    return s?.status === 'ended' ? s : undefined
  })
  t.equal(row.end_reason, 'transferred')
  t.equal(row.transferred_to, '+14155550100')
  const transcript = await c.gw.store.db.selectFrom('transcript_entries').selectAll().where('session_id', '=', row.id).execute()
  t.match(
    transcript.map((e) => e.assistant_message),
    ['Connecting you to a colleague.'],
    'the content is in the transcript',
  )
})

t.test('a transfer to a SIP URI carries the backend context as X- headers in the URI', async (t) => {
  const { c } = await startVoiceWorld(t)
  const { tenant, backend, api } = await tenantWithApi(t, c, 'transfer-token-2')
  backend.reply = (req) =>
    req.json.type === 'session.start'
      ? transferReply(req.json.turn_id, { to: 'sip:queue@cc.example.com', headers: { 'X-Ticket': 'T-42', Reason: 'billing dispute' } })
      : sse(req.json.turn_id, 'ok')
  const { callSid, call } = await connectedCall(c, tenant, api)
  await call.ended
  t.same(
    api.updates[0]?.verbs,
    [
      {
        verb: 'Dial',
        callerId: undefined,
        targets: [{ kind: 'Sip', value: 'sip:queue@cc.example.com?X-Ticket=T-42&X-Reason=billing%20dispute' }],
      },
    ],
    '<Dial><Sip> with the headers X- prefixed and URI-encoded',
  )
  const row = await eventually(async () => {
    const s = await sessionOfCall(c, callSid)
    return s?.status === 'ended' ? s : undefined
  })
  t.equal(row.end_reason, 'transferred')
  t.equal(row.transferred_to, 'sip:queue@cc.example.com', 'stored without the headers')
})

t.test('a transfer the carrier refuses is apologised for, reported as data, and the call goes on', async (t) => {
  const { c } = await startVoiceWorld(t)
  const { tenant, backend, api } = await tenantWithApi(t, c, 'transfer-token-3')
  backend.reply = (req) => {
    if (req.json.type === 'session.start') return transferReply(req.json.turn_id, { to: '+14155550100' })
    if (req.json.type === 'data') return { kind: 'json', body: {} }
    return sse(req.json.turn_id, 'ok')
  }
  api.failNext({ status: 400, code: 13223, message: 'Dial: Invalid phone number format' })
  const { callSid, call } = await connectedCall(c, tenant, api)
  const data = await eventually(async () => backend.requests.find((r) => r.json.type === 'data'))
  t.same(
    data.json.data,
    {
      transfer_failed: {
        to: '+14155550100',
        error: 'the carrier could not transfer the call: Dial: Invalid phone number format (carrier error 13223)',
        code: 'transfer_failed',
      },
    },
    'the backend hears why, in the error registry shape',
  )
  await eventually(async () => (call.receivedAudio().length > 0 ? true : undefined))
  t.ok(call.isOpen, 'the call goes on')
  const row = await sessionOfCall(c, callSid)
  t.equal(row?.status, 'connected')
  const transcript = await eventually(async () => {
    const rows = await c.gw.store.db.selectFrom('transcript_entries').selectAll().where('session_id', '=', row!.id).execute()
    return rows.length > 0 ? rows : undefined
  })
  t.equal(transcript[0]?.assistant_message, 'I am sorry, I could not transfer your call.', 'the apology was spoken')
  await call.hangup()
})

t.test('an invalid transfer target never reaches the carrier: the backend gets invalid_transfer_target', async (t) => {
  const { c } = await startVoiceWorld(t)
  const { tenant, backend, api } = await tenantWithApi(t, c, 'transfer-token-4')
  backend.reply = (req) => {
    if (req.json.type === 'session.start') return transferReply(req.json.turn_id, { to: '12345', headers: { 'X-Ticket': '1' } })
    if (req.json.type === 'data') return { kind: 'json', body: {} }
    return sse(req.json.turn_id, 'ok')
  }
  const { call } = await connectedCall(c, tenant, api)
  const data = await eventually(async () => backend.requests.find((r) => r.json.type === 'data'))
  t.equal(data.json.data.transfer_failed.code, 'invalid_transfer_target')
  t.equal(data.json.data.transfer_failed.to, '12345')
  t.match(data.json.data.transfer_failed.error, /^invalid transfer target: to: "12345" is neither an E\.164 phone number nor a sip: URI$/)
  t.same(data.json.data.transfer_failed.details, [
    'to: "12345" is neither an E.164 phone number nor a sip: URI',
    'headers need a sip: target (a phone network carries no SIP headers)',
  ])
  t.equal(api.updates.length, 0, 'the carrier was not asked')
  t.ok(call.isOpen, 'the call goes on')
  await call.hangup()
})

t.test(
  'a transfer of a call on replica A while the carrier reports the call to replica B ends it transferred',
  { skip: process.env.DATABASE_URL === undefined && 'needs DATABASE_URL: two gateway processes share one Postgres server' },
  async (t) => {
    const b = await startCarrierGateway()
    t.teardown(() => b.gw.close())
    const a = await spawnGateway({ DATABASE_URL: b.gw.db.options.databaseUrl!, PUBLIC_URL, ADMIN_TOKEN: '', ALLOW_INSECURE_WEBHOOKS: '1' })
    t.teardown(() => a.kill('SIGKILL'))
    const token = 'transfer-token-5'
    const api = await FakeCallsApi.start({ authToken: token })
    t.teardown(() => api.close())
    const { tenant, backend } = await newBackendTenant(t, b, token)
    // The session webhook goes to the same fake backend: session.end must say where the call went.
    const agent = (await b.gw.request('GET', `/v1/agents/${tenant.agentId}`, { key: tenant.apiKey })).body
    const config = { ...agent.config, session_webhook: { url: backend.url, events: ['session.end'] } }
    t.equal((await b.gw.request('POST', `/v1/agents/${tenant.agentId}`, { key: tenant.apiKey, body: { config } })).status, 200)
    const stored = await b.gw.request('PUT', `/admin/v1/organizations/${tenant.orgId}/carrier`, {
      admin: true,
      body: { account_sid: api.accountSid, auth_token: token, api_base_url: api.baseUrl },
    })
    t.equal(stored.status, 200)
    backend.reply = (req) =>
      req.json.type === 'session.start' ? transferReply(req.json.turn_id, { to: 'sip:desk@cc.example.com' }) : { kind: 'json', body: {} }

    const callSid = newCallSid()
    // While replica A's update is in flight, the carrier's final callback for the call lands on replica B.
    const callbacks: number[] = []
    api.beforeUpdateReply = async () => {
      const r = await postSignedForm({
        postTo: b.rewrite(b.statusUrl),
        signedUrl: b.statusUrl,
        form: { CallSid: callSid, CallStatus: 'completed', AccountSid: api.accountSid },
        authToken: token,
      })
      callbacks.push(r.status)
    }
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
    if (r.outcome !== 'connected') throw new Error(`call not connected: ${JSON.stringify(r)}`)
    api.addInbound(callSid, r.call)
    const live = await eventually(async () => {
      const s = await sessionOfCall(b, callSid)
      return s?.status === 'connected' || s?.status === 'ended' ? s : undefined
    }, 10_000)
    t.not(live.lease_owner, b.gw.gateway.sessions.keeper.owner, 'the call runs on replica A')
    const row = await eventually(async () => {
      const s = await sessionOfCall(b, callSid)
      return s?.status === 'ended' ? s : undefined
    }, 15_000)
    t.same(callbacks, [204], 'replica B took the carrier callback during the transfer')
    t.equal(api.updates.length, 1, 'replica A updated the call once')
    t.same(api.updates[0]?.verbs, [{ verb: 'Dial', callerId: undefined, targets: [{ kind: 'Sip', value: 'sip:desk@cc.example.com' }] }])
    t.equal(row.end_reason, 'transferred', 'the callback did not turn the transfer into a hangup')
    t.equal(row.transferred_to, 'sip:desk@cc.example.com')
    const end = await eventually(async () => backend.requests.find((q) => q.json.type === 'session.end'), 10_000)
    t.equal(end.json.end_reason, 'transferred')
    t.equal(end.json.transferred_to, 'sip:desk@cc.example.com', 'session.end says where the call went')
  },
)
