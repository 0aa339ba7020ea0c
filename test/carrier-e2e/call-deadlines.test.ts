import t from 'tap'
import { FakeCallsApi } from '../fakes/carrier/fake-calls-api.js'
import { newCallSid } from '../fakes/carrier/phone-simulator.js'
import { postSignedForm } from '../fakes/carrier/sign.js'
import { eventually, newTenant, sessionOfCall, startCarrierGateway } from './carrier-setup.js'

// Short deadlines: a ringing call may wait 1 s + 300 ms for its final status, an answered one 300 ms for its stream.
const c = await startCarrierGateway({}, { ringTimeoutSec: 1, statusGraceMs: 300, streamConnectTimeoutMs: 300 })
t.teardown(() => c.gw.close())

t.test('an outbound call whose final status never comes ends after ring timeout and grace, and is hung up', async (t) => {
  const api = await FakeCallsApi.start({ stepMs: 5, rewriteUrl: c.rewrite })
  t.teardown(() => api.close())
  api.outcome = { kind: 'manual' }
  const tenant = await newTenant(c, { carrier: { authToken: api.authToken, api } })
  const res = await c.gw.request('POST', `/v1/agents/${tenant.agentId}/calls/initiate_outbound`, {
    key: tenant.apiKey,
    body: { from_phone_number: tenant.number, to_phone_number: '+12025550143' },
  })
  t.equal(res.status, 200, res.text)
  t.match(await sessionOfCall(c, res.body.call_sid), { status: 'authorized' }, 'waits while it rings')
  const ended = await eventually(async () => {
    const s = await sessionOfCall(c, res.body.call_sid)
    return s?.status === 'ended' ? s : undefined
  })
  t.match(ended, { end_reason: 'call_status_timeout', lease_expires_at: null, started_at: null })
  await eventually(async () => (api.requests.some((r) => r.path.endsWith(`/Calls/${res.body.call_sid}.json`)) ? true : undefined))
  const hangup = api.requests.find((r) => r.path.endsWith(`/Calls/${res.body.call_sid}.json`))
  t.match(hangup?.form, { Status: 'completed' }, 'hung up at the carrier')
})

t.test('an answered call whose media stream never connects ends and frees its slot', async (t) => {
  const api = await FakeCallsApi.start({ stepMs: 5, rewriteUrl: c.rewrite })
  t.teardown(() => api.close())
  const tenant = await newTenant(c, { limit: 1, carrier: { authToken: api.authToken, api } })
  const callSid = newCallSid()
  const form = { CallSid: callSid, AccountSid: api.accountSid, From: '+442071838750', To: tenant.number, Direction: 'inbound' }
  const res = await postSignedForm({ postTo: c.rewrite(c.hookUrl), signedUrl: c.hookUrl, form, authToken: api.authToken })
  t.match(res.body, /<Stream url=/)
  const ended = await eventually(async () => {
    const s = await sessionOfCall(c, callSid)
    return s?.status === 'ended' ? s : undefined
  })
  t.match(ended, { end_reason: 'stream_not_connected', lease_expires_at: null })
  const again = await postSignedForm({
    postTo: c.rewrite(c.hookUrl),
    signedUrl: c.hookUrl,
    form: { ...form, CallSid: newCallSid() },
    authToken: api.authToken,
  })
  t.match(again.body, /<Stream url=/, 'the slot is free again (limit 1)')
})
