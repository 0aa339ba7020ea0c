/**
 * initiate_outbound through the organization's SIP trunk, end to end: one gateway with SIP on, a trunk made
 * through the API whose `outbound.from_number` is the agent's number, and a fake trunk (test/fakes/sip-trunk)
 * over UDP. The INVITE is challenged and retried with digest, the callee hears the welcome as RTP, BYE either
 * way ends the session (channel `sip`) with the webhooks a carrier outbound call sends; a busy trunk gives
 * `busy`, and a call nobody answers is CANCELled at the ring timeout (`no-answer`).
 */
import t from 'tap'
import { encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { getHeader } from '../../transports/sip/message/sip-message.js'
import { eventually, newBackendTenant, newTenant, sse } from '../carrier-e2e/carrier-setup.js'
import { FakeSipTrunk } from '../fakes/sip-trunk/fake-sip-trunk.js'
import { startSipWorld } from './sip-setup.js'
import { startWebhookReceiver } from '../helpers/webhook-receiver.js'

const CALLEE = '+14155550123'
const { c, sipPort } = await startSipWorld(t, {}, { ringTimeoutSec: 1 })
const receiver = await startWebhookReceiver()
t.teardown(() => receiver.close())
const { tenant, backend } = await newBackendTenant(t, c, 'sip-out-token', (config) => {
  config.session_webhook = { url: `${receiver.url}/lifecycle` }
})
const welcome = (req: { json: any }) =>
  sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello, this is the agent calling.' : 'Noted.')
backend.reply = welcome
const credentials = { username: 'voxgate', password: 'trunk-secret' }
const trunk = await FakeSipTrunk.start(credentials)
t.teardown(() => trunk.close())
// Pacing is the carrier path's, tested there; here calls follow each other without waiting for a dial slot.
{
  const org = await c.gw.request('PATCH', `/admin/v1/organizations/${tenant.orgId}`, {
    admin: true,
    body: { outbound_calls_per_second: 100 },
  })
  if (org.status !== 200) throw new Error(org.text)
}
const trunkId = await (async () => {
  const r = await c.gw.request('POST', '/v1/sip/trunks', {
    key: tenant.apiKey,
    body: { name: 'carrier trunk', outbound: { uri: trunk.uri, ...credentials, from_number: tenant.number } },
  })
  if (r.status !== 201) throw new Error(r.text)
  return r.body.id as string
})()

async function initiate() {
  const r = await c.gw.request('POST', `/v1/agents/${tenant.agentId}/calls/initiate_outbound`, {
    key: tenant.apiKey,
    body: { from_phone_number: tenant.number, to_phone_number: CALLEE },
  })
  if (r.status !== 200) throw new Error(`${r.status} ${r.text}`)
  return r.body as { session_id: string; call_sid: string }
}

const sessionRow = (id: string) => c.gw.store.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
const ended = (id: string) =>
  eventually(async () => {
    const row = await sessionRow(id)
    return row.status === 'ended' ? row : undefined
  }, 5_000)

t.test('challenged, answered, the welcome heard, the callee hangs up; then the agent hangs up', async (t) => {
  const call = await initiate()
  const first = await trunk.requests.next(3_000, 'the INVITE')
  t.equal(first.uri, `sip:${CALLEE}@127.0.0.1:${trunk.sip.address().port}`)
  t.equal(getHeader(first, 'Proxy-Authorization'), undefined, 'the first INVITE has no credentials')
  const invites = await eventually(async () => {
    const all = trunk.log.filter((r) => r.method === 'INVITE')
    return all.length >= 2 ? all : undefined
  }, 3_000)
  t.match(getHeader(invites[1]!, 'Proxy-Authorization'), /^Digest username="voxgate"/, 'retried with digest after the 407')
  t.equal(call.call_sid, getHeader(first, 'Call-ID'), 'call_sid is the SIP Call-ID')
  await receiver.waitFor((r) => r.json?.type === 'session.start' && r.json.session_id === call.session_id)
  const loud = await eventually(async () => {
    const speech = trunk.heard.filter((h) => h.payloadType === 0 && h.payload.some((b) => (b & 0x7f) < 0x70))
    return speech.length >= 10 ? speech : undefined
  }, 5_000)
  t.ok(loud.length >= 10, 'the callee hears the welcome as RTP')
  const live = await sessionRow(call.session_id)
  t.same([live.channel, live.direction, live.status, live.call_status], ['sip', 'outbound-api', 'connected', 'in-progress'])

  trunk.hangUp(call.call_sid)
  const row = await ended(call.session_id)
  t.same([row.end_reason, row.call_status], ['caller_hangup', 'completed'])
  const end = await receiver.waitFor((r) => r.json?.type === 'session.end' && r.json.session_id === call.session_id)
  t.equal(end.json.end_reason, 'caller_hangup')
  await eventually(async () => (c.gw.gateway.sip?.liveCalls === 0 ? true : undefined))

  t.teardown(() => {
    backend.reply = welcome
  })
  backend.reply = (req) =>
    req.json.type === 'session.start'
      ? { kind: 'sse', steps: [{ data: { type: 'response.hangup', content: 'Goodbye.', turn_id: req.json.turn_id } }] }
      : sse(req.json.turn_id)
  const second = await initiate()
  const bye = await eventually(async () => trunk.log.find((r) => r.method === 'BYE' && getHeader(r, 'Call-ID') === second.call_sid))
  t.ok(bye, 'the agent hanging up sends BYE to the trunk')
  t.equal((await ended(second.session_id)).end_reason, 'hangup')
})

t.test('a busy trunk: call_status busy and the session.end of a call that never connected', async (t) => {
  trunk.mode = 'busy'
  t.teardown(() => {
    trunk.mode = 'answer'
  })
  const call = await initiate()
  const row = await ended(call.session_id)
  t.same([row.channel, row.end_reason, row.call_status], ['sip', 'call_busy', 'busy'])
  const end = await receiver.waitFor((r) => r.json?.type === 'session.end' && r.json.session_id === call.session_id)
  t.equal(end.json.call_status, 'busy')
})

t.test('nobody answers: CANCEL at the ring timeout, call_status no-answer', async (t) => {
  trunk.mode = 'never'
  t.teardown(() => {
    trunk.mode = 'answer'
  })
  const call = await initiate()
  const cancel = await eventually(async () => trunk.log.find((r) => r.method === 'CANCEL' && getHeader(r, 'Call-ID') === call.call_sid))
  t.ok(cancel, 'CANCEL sent')
  const row = await ended(call.session_id)
  t.same([row.end_reason, row.call_status], ['call_no_answer', 'no-answer'])
  await receiver.waitFor((r) => r.json?.type === 'session.end' && r.json.session_id === call.session_id)
  t.equal(c.gw.gateway.sip?.liveCalls, 0)
})

t.test('a trunk URI that cannot be dialled: 400 carrier_rejected, the session ended as failed', async (t) => {
  const patch = (uri: string) => c.gw.request('PATCH', `/v1/sip/trunks/${trunkId}`, { key: tenant.apiKey, body: { outbound: { uri } } })
  t.equal((await patch('sip:127.0.0.1:9;transport=sctp')).status, 200)
  t.teardown(() => patch(trunk.uri))
  const r = await c.gw.request('POST', `/v1/agents/${tenant.agentId}/calls/initiate_outbound`, {
    key: tenant.apiKey,
    body: { from_phone_number: tenant.number, to_phone_number: CALLEE },
  })
  t.equal(r.status, 400)
  t.equal(r.body.code, 'carrier_rejected')
  const [row] = await c.gw.store.db
    .selectFrom('sessions')
    .selectAll()
    .where('organization_id', '=', tenant.orgId)
    .orderBy('created_at', 'desc')
    .limit(1)
    .execute()
  t.same([row?.status, row?.call_status, row?.end_reason], ['ended', 'failed', 'call_failed'])
})

t.test("a trunk at an address the egress rules refuse is not dialled: the cloud's metadata service, the gateway itself", async (t) => {
  const patch = (uri: string) => c.gw.request('PATCH', `/v1/sip/trunks/${trunkId}`, { key: tenant.apiKey, body: { outbound: { uri } } })
  t.teardown(() => patch(trunk.uri))
  const gatewayPort = new URL(c.gw.url).port
  for (const uri of ['sip:169.254.169.254:5060', `sip:127.0.0.1:${gatewayPort}`, `sip:127.0.0.1:${sipPort}`]) {
    t.equal((await patch(uri)).status, 200)
    const r = await c.gw.request('POST', `/v1/agents/${tenant.agentId}/calls/initiate_outbound`, {
      key: tenant.apiKey,
      body: { from_phone_number: tenant.number, to_phone_number: CALLEE },
    })
    t.equal(r.status, 400, uri)
    t.match(r.body, { code: 'carrier_rejected', error: /forbidden_address/ }, `${uri}: refused before anything is sent`)
  }
})

t.test('an organization without carrier credentials: any assigned number goes out through its trunk', async (t) => {
  const sipOnly = await newTenant(c)
  const made = await c.gw.request('POST', '/v1/sip/trunks', {
    key: sipOnly.apiKey,
    body: { name: 'only trunk', outbound: { uri: trunk.uri, ...credentials } },
  })
  t.equal(made.status, 201)
  trunk.mode = 'busy'
  t.teardown(() => {
    trunk.mode = 'answer'
  })
  const r = await c.gw.request('POST', `/v1/agents/${sipOnly.agentId}/calls/initiate_outbound`, {
    key: sipOnly.apiKey,
    body: { from_phone_number: sipOnly.number, to_phone_number: CALLEE },
  })
  t.equal(r.status, 200, 'placed, not carrier_not_configured')
  const invite = await eventually(async () => trunk.log.find((q) => q.method === 'INVITE' && getHeader(q, 'Call-ID') === r.body.call_sid))
  t.match(getHeader(invite, 'From'), new RegExp(`^<sip:\\${sipOnly.number}@`), 'from the assigned number')
  const row = await ended(r.body.session_id)
  t.same([row.channel, row.call_status], ['sip', 'busy'])
})

t.test("machine detection: the gateway's beep detector hears a voicemail beep on a SIP call", async (t) => {
  const r = await c.gw.request('POST', `/v1/agents/${tenant.agentId}/calls/initiate_outbound`, {
    key: tenant.apiKey,
    body: { from_phone_number: tenant.number, to_phone_number: CALLEE, machine_detection: true },
  })
  t.equal(r.status, 200)
  // The beep comes once the callee hears the agent's welcome, as a machine beeps after its greeting: the session
  // row says `connected` before the call's RTP reaches the session, and a beep played then was lost on a slow VM.
  const heardBefore = trunk.heard.length
  await eventually(async () => {
    const speech = trunk.heard.slice(heardBefore).filter((h) => h.payloadType === 0 && h.payload.some((b) => (b & 0x7f) < 0x70))
    return speech.length >= 5 ? true : undefined
  }, 5_000)
  t.equal((await sessionRow(r.body.session_id)).status, 'connected')
  // 1 kHz for 400 ms at -10 dBm0 between short silences, as an answering machine's beep.
  const pcm = new Int16Array(8000 * 0.8)
  const amplitude = 32767 * 10 ** ((-10 - 3.17) / 20)
  for (let i = 0; i < 3200; i++) pcm[800 + i] = Math.round(amplitude * Math.sin((2 * Math.PI * 1000 * i) / 8000))
  trunk.play(Buffer.from(encodeMulaw(pcm)))
  const row = await eventually(async () => {
    const current = await sessionRow(r.body.session_id)
    return current.answered_by === 'machine_beep' ? current : undefined
  }, 5_000)
  t.same([row.channel, row.machine_detection], ['sip', true])
  trunk.hangUp(r.body.call_sid)
  await ended(r.body.session_id)
})
