import t from 'tap'
import { FakeCallsApi } from '../fakes/carrier/fake-calls-api.js'
import { postSignedForm } from '../fakes/carrier/sign.js'
import { startWebhookReceiver } from '../helpers/webhook-receiver.js'
import { eventually, newNumber, newTenant, sessionOfCall, startCarrierGateway, type CarrierTenant } from './carrier-setup.js'

const c = await startCarrierGateway()
t.teardown(() => c.gw.close())
const receiver = await startWebhookReceiver()
t.teardown(() => receiver.close())
const CALLEE = '+12025550143'

async function carrierTenant(api: FakeCallsApi, opts: Parameters<typeof newTenant>[1] = {}) {
  return newTenant(c, {
    carrier: { authToken: api.authToken, api },
    config: (cfg) => ({ ...cfg, session_webhook: { url: `${receiver.url}/lifecycle` } }),
    ...opts,
  })
}

function initiate(tenant: CarrierTenant, body: unknown, agentId = tenant.agentId) {
  return c.gw.request('POST', `/v1/agents/${agentId}/calls/initiate_outbound`, { key: tenant.apiKey, body })
}

async function startApi(t: { teardown(fn: () => unknown): void }) {
  const api = await FakeCallsApi.start({ stepMs: 5, rewriteUrl: c.rewrite })
  t.teardown(() => api.close())
  return api
}

t.test('an outbound call is placed, answered and connected; hanging up completes it', async (t) => {
  const api = await startApi(t)
  api.outcome = { kind: 'answer', realtime: false }
  const tenant = await carrierTenant(api)
  const res = await initiate(tenant, { from_phone_number: tenant.number, to_phone_number: CALLEE })
  t.equal(res.status, 200, res.text)
  t.match(res.body, { conversation_id: /^conv_/, session_id: /^sess_/, call_sid: /^CA/ })
  const sent = api.requests.find((r) => r.path.endsWith('/Calls.json'))
  t.match(sent?.form, {
    To: CALLEE,
    From: tenant.number,
    Url: 'https://voice.example.test/v1/agents/carrier/twiml',
    StatusCallback: 'https://voice.example.test/v1/agents/carrier/status',
    StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
  })
  const call = api.calls.get(res.body.call_sid)!
  await eventually(async () => (call.phone?.outcome === 'connected' ? true : undefined))
  const phone = call.phone!
  if (phone.outcome !== 'connected') return
  const row = await eventually(async () => {
    const s = await sessionOfCall(c, res.body.call_sid)
    return s?.status === 'connected' ? s : undefined
  })
  t.match(row, {
    id: res.body.session_id,
    conversation_id: res.body.conversation_id,
    direction: 'outbound-api',
    from_phone_number: tenant.number,
    to_phone_number: CALLEE,
    to_phone_country: 'US',
  })
  await phone.call.hangup()
  t.equal(await call.done, 'completed')
  const ended = await eventually(async () => {
    const s = await sessionOfCall(c, res.body.call_sid)
    return s?.status === 'ended' && s.call_status === 'completed' ? s : undefined
  })
  t.equal(ended.end_reason, 'caller_hangup')
  t.ok(
    call.callbacks.every((cb) => cb.reply === 204),
    'every status callback accepted',
  )
  t.same(phone.call.errors, [])
})

t.test('request validation: 400s', async (t) => {
  const api = await startApi(t)
  const tenant = await carrierTenant(api)
  const other = await carrierTenant(api)
  const cases: [unknown, string, number][] = [
    [{}, 'validation_failed', 400],
    [{ from_phone_number: tenant.number }, 'validation_failed', 400],
    [{ from_phone_number: 'nope', to_phone_number: CALLEE }, 'invalid_phone_number', 400],
    [{ from_phone_number: tenant.number, to_phone_number: '+1555' }, 'invalid_phone_number', 400],
    [{ from_phone_number: other.number, to_phone_number: CALLEE }, 'phone_number_not_assigned', 400],
    [{ from_phone_number: newNumber(), to_phone_number: CALLEE }, 'phone_number_not_assigned', 400],
  ]
  for (const [body, code, status] of cases) {
    const r = await initiate(tenant, body)
    t.equal(r.status, status, JSON.stringify(body))
    t.equal(r.body.code, code)
    t.type(r.body.error, 'string')
  }
  const unknownAgent = await initiate(tenant, { from_phone_number: tenant.number, to_phone_number: CALLEE }, 'agt_nope')
  t.equal(unknownAgent.status, 400)
  const noKey = await c.gw.request('POST', `/v1/agents/${tenant.agentId}/calls/initiate_outbound`, { key: null, body: {} })
  t.equal(noKey.status, 400)
  const noCreds = await newTenant(c)
  const r = await initiate(noCreds, { from_phone_number: noCreds.number, to_phone_number: CALLEE })
  t.equal(r.status, 400)
  t.equal(r.body.code, 'carrier_not_configured')
  t.equal(api.requests.length, 0, 'nothing reached the carrier')
})

t.test('402 with no balance', async (t) => {
  const api = await startApi(t)
  const tenant = await carrierTenant(api, { balance: 0 })
  const r = await initiate(tenant, { from_phone_number: tenant.number, to_phone_number: CALLEE })
  t.equal(r.status, 402)
  t.equal(r.body.error, 'insufficient balance')
})

t.test('check order: request 400s, then balance 402 and concurrency 429, then missing carrier credentials', async (t) => {
  const api = await startApi(t)
  const broke = await newTenant(c, { balance: 0 })
  const body = { from_phone_number: broke.number, to_phone_number: CALLEE }
  const poor = await initiate(broke, body)
  t.equal(poor.status, 402, 'no balance and no credentials: the balance answers')
  t.match(poor.body, { code: 'insufficient_balance', error: 'insufficient balance' })
  const unassigned = await initiate(broke, { from_phone_number: newNumber(), to_phone_number: CALLEE })
  t.equal(unassigned.status, 400, 'a wrong request is still 400 before the balance')
  t.equal(unassigned.body.code, 'phone_number_not_assigned')
  const full = await newTenant(c, { limit: 0 })
  const busy = await initiate(full, { from_phone_number: full.number, to_phone_number: CALLEE })
  t.equal(busy.status, 429, 'no free slot and no credentials: the limit answers')
  t.match(busy.body, { code: 'concurrency_limit', error: 'concurrent session limit reached' })
  const fine = await newTenant(c)
  const noCreds = await initiate(fine, { from_phone_number: fine.number, to_phone_number: CALLEE })
  t.equal(noCreds.status, 400, 'balance and a slot, no credentials')
  t.equal(noCreds.body.code, 'carrier_not_configured')
  const rows = await c.gw.store.db
    .selectFrom('sessions')
    .select('id')
    .where('agent_id', 'in', [broke.agentId, full.agentId, fine.agentId])
    .execute()
  t.same(rows, [], 'no refused request left a session behind')
  t.equal(api.requests.length, 0, 'nothing reached the carrier')
})

t.test('429: a ringing call holds its slot; a call that is not answered frees it', async (t) => {
  const api = await startApi(t)
  api.outcome = { kind: 'manual' }
  const tenant = await carrierTenant(api, { limit: 1 })
  const body = { from_phone_number: tenant.number, to_phone_number: CALLEE }
  const first = await initiate(tenant, body)
  t.equal(first.status, 200)
  const second = await initiate(tenant, body)
  t.equal(second.status, 429)
  t.equal(second.body.error, 'concurrent session limit reached')
  const call = api.calls.get(first.body.call_sid)!
  await call.progress('initiated')
  await call.progress('ringing')
  t.equal((await sessionOfCall(c, call.sid))?.call_status, 'ringing')
  await call.finish('no-answer')
  const row = await sessionOfCall(c, call.sid)
  t.match(row, { status: 'ended', end_reason: 'call_no_answer', call_status: 'no-answer', lease_expires_at: null, started_at: null })
  const end = await receiver.waitFor((r) => r.json?.type === 'session.end' && r.json.session_id === first.body.session_id)
  t.match(end.json, { call_status: 'no-answer', end_reason: 'call_no_answer', duration: null, transcript: [] })
  t.notOk(
    receiver.requests.some((r) => r.json?.type === 'session.start' && r.json.session_id === first.body.session_id),
    'no session.start',
  )
  const third = await initiate(tenant, body)
  t.equal(third.status, 200, 'the slot is free again')
})

t.test('busy and failed calls end their sessions with that status', async (t) => {
  const api = await startApi(t)
  const tenant = await carrierTenant(api)
  for (const kind of ['busy', 'failed', 'canceled'] as const) {
    api.outcome = { kind }
    const r = await initiate(tenant, { from_phone_number: tenant.number, to_phone_number: CALLEE })
    t.equal(await api.calls.get(r.body.call_sid)?.done, kind)
    t.match(await sessionOfCall(c, r.body.call_sid), { status: 'ended', call_status: kind, end_reason: `call_${kind}` })
  }
})

t.test('carrier errors become clear API errors and release the slot', async (t) => {
  const api = await startApi(t)
  api.outcome = { kind: 'manual' }
  const tenant = await carrierTenant(api, { limit: 1 })
  const body = { from_phone_number: tenant.number, to_phone_number: CALLEE }
  api.failNext({ status: 400, code: 21215, message: 'Account not authorized to call +12025550143.' })
  const rejected = await initiate(tenant, body)
  t.equal(rejected.status, 400)
  t.match(rejected.body, { code: 'carrier_rejected', error: /Account not authorized to call.*21215/ })
  api.failNext({ status: 401, code: 20003, message: 'Authenticate' })
  const auth = await initiate(tenant, body)
  t.equal(auth.status, 502)
  t.match(auth.body, { code: 'carrier_auth_failed', error: /credentials/ })
  api.failNext({ status: 429, code: 20429, message: 'Too Many Requests', times: 4, headers: { 'retry-after': '0' } })
  const limited = await initiate(tenant, body)
  t.equal(limited.status, 503)
  t.equal(limited.body.code, 'carrier_rate_limited')
  api.failNext({ status: 500, message: 'oops' })
  const down = await initiate(tenant, body)
  t.equal(down.status, 502)
  t.equal(down.body.code, 'carrier_unavailable')
  const rows = await c.gw.store.db.selectFrom('sessions').selectAll().where('agent_id', '=', tenant.agentId).execute()
  t.equal(rows.length, 4)
  t.ok(rows.every((r) => r.status === 'ended' && r.end_reason === 'carrier_error' && r.lease_expires_at === null))
  const ok = await initiate(tenant, body)
  t.equal(ok.status, 200, 'the limit of 1 is free after the errors')
})

t.test('status callbacks are signed', async (t) => {
  const api = await startApi(t)
  api.outcome = { kind: 'manual' }
  const tenant = await carrierTenant(api)
  const r = await initiate(tenant, { from_phone_number: tenant.number, to_phone_number: CALLEE })
  const form = { CallSid: r.body.call_sid, CallStatus: 'busy', AccountSid: api.accountSid }
  const unsigned = await postSignedForm({ postTo: c.rewrite(c.statusUrl), signedUrl: c.statusUrl, form, authToken: undefined })
  t.equal(unsigned.status, 403)
  const forged = await postSignedForm({ postTo: c.rewrite(c.statusUrl), signedUrl: c.statusUrl, form, authToken: 'forged' })
  t.equal(forged.status, 403)
  t.match(await sessionOfCall(c, r.body.call_sid), { status: 'authorized', call_status: 'queued' })
  const bad = await postSignedForm({
    postTo: c.rewrite(c.statusUrl),
    signedUrl: c.statusUrl,
    form: { CallSid: 'CAx' },
    authToken: api.authToken,
  })
  t.equal(bad.status, 400)
  // Out of order: a late ringing does not move an answered call back.
  const post = (CallStatus: string) =>
    postSignedForm({ postTo: c.rewrite(c.statusUrl), signedUrl: c.statusUrl, form: { ...form, CallStatus }, authToken: api.authToken })
  t.equal((await post('in-progress')).status, 204)
  t.equal((await post('ringing')).status, 204)
  t.equal((await sessionOfCall(c, r.body.call_sid))?.call_status, 'in-progress')
})

t.test('an unknown answered outbound call is refused politely', async (t) => {
  const tenant = await newTenant(c, { carrier: { authToken: 'tok-unknown' } })
  const form = { CallSid: `CA${'f'.repeat(32)}`, From: tenant.number, To: CALLEE, Direction: 'outbound-api', CallStatus: 'in-progress' }
  const res = await postSignedForm({ postTo: c.rewrite(c.hookUrl), signedUrl: c.hookUrl, form, authToken: 'tok-unknown' })
  t.equal(res.status, 200)
  t.match(res.body, /<Say>This call can no longer be connected. Goodbye.<\/Say><Hangup\/>/)
})
