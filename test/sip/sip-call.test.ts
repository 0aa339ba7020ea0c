/**
 * Inbound SIP calls end to end: a real gateway with SIP on, trunks made through the API, and a test phone
 * (test/helpers/sip-caller.ts) speaking SIP and RTP over UDP. An allowed caller hears the welcome as paced RTP,
 * its digits reach the agent, and hanging up either way ends the session (channel `sip`, lifecycle webhooks);
 * a stranger, a wrong password and an unknown number leave no session. (CANCEL races the admission, which on
 * PGlite finishes within one turn of the event loop: sip-call-cancel.test.ts holds the admission to test it.)
 */
import t, { type Test } from 'tap'
import { startWebhookReceiver } from '../helpers/webhook-receiver.js'
import { eventually, newBackendTenant, newTenant, sse } from '../carrier-e2e/carrier-setup.js'
import { addTrunk, startSipWorld } from './sip-setup.js'
import { SipCaller } from '../helpers/sip-caller.js'
import { getHeader } from '../../transports/sip/message/sip-message.js'

const { c, sipPort, ...world } = await startSipWorld(t)
const gateway = { host: '127.0.0.1', port: sipPort }
const receiver = await startWebhookReceiver()
t.teardown(() => receiver.close())
const { tenant, backend } = await newBackendTenant(t, c, 'sip-token', (config) => {
  config.session_webhook = { url: `${receiver.url}/lifecycle` }
})
backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello, you reached the SIP line.' : 'Noted.')
{
  const org = await c.gw.request('PATCH', `/admin/v1/organizations/${tenant.orgId}`, { admin: true, body: { recording_enabled: true } })
  if (org.status !== 200) throw new Error(org.text)
}

const trunk = (apiKey: string, inbound: Record<string, unknown>) => addTrunk({ c, ...world }, apiKey, inbound)
await trunk(tenant.apiKey, { allowed_cidrs: ['127.0.0.1'] })
// Another organization behind the same address, whose trunk asks for digest.
const guarded = await newTenant(c)
await trunk(guarded.apiKey, { allowed_cidrs: ['127.0.0.1'], username: 'pbx', password: 'right-password' })

async function phone(t: Test, address = '127.0.0.1'): Promise<SipCaller> {
  const p = await SipCaller.open(gateway, address)
  t.teardown(() => p.close())
  return p
}

async function sessionsOf(orgId: string) {
  return c.gw.store.db.selectFrom('sessions').selectAll().where('organization_id', '=', orgId).orderBy('created_at').execute()
}

/** Dials `number` and returns the 200 once ACKed. */
async function connect(p: SipCaller, number: string) {
  p.invite(number)
  const ok = await p.final()
  if (ok.status !== 200) throw new Error(`${ok.status} ${ok.reason}`)
  p.ack(ok)
  return ok
}

t.test('a call from a trunk hears the welcome as paced RTP, DTMF reaches the agent, the caller hangs up', async (t) => {
  const p = await phone(t)
  const ok = await connect(p, tenant.number.slice(1))
  t.match(getHeader(ok, 'Contact'), `<sip:127.0.0.1:${sipPort}>`)
  t.match(ok.body.toString(), /m=audio \d+ RTP\/AVP 0 101/, 'PCMU and telephone-event answered')

  // The welcome: non-silent mu-law, one packet per 20 ms, consecutive sequence numbers. Silence goes out from
  // the answer on (steady RTP); the timing is measured from the welcome's first packet, after the session's start.
  const speech = await eventually(async () => {
    const loud = p.heard.filter((h) => h.payloadType === 0 && h.payload.some((b) => (b & 0x7f) < 0x70))
    const from = loud.length >= 25 ? p.heard.indexOf(loud[0]!) : -1
    return from >= 0 && p.heard.length >= from + 40 ? p.heard.slice(from, from + 40) : undefined
  }, 5_000)
  const jumps = speech.slice(1).filter((h, i) => h.sequence !== ((speech[i]!.sequence + 1) & 0xffff))
  t.equal(jumps.length, 0, `sequence numbers consecutive over ${speech.length} packets`)
  const gaps = speech.slice(1).map((h, i) => h.at - speech[i]!.at)
  const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length
  t.ok(mean > 16 && mean < 24, `packets ~20 ms apart (mean ${mean.toFixed(1)} ms)`)
  // No bursts: no 100 ms holds more than 12 packets (5 paced). The pacer catches up after a late timer at most one
  // packet per 10 ms (its unit tests, on an injected clock), and this process, which also runs the gateway, may read
  // two together after a late turn of its event loop; a burst (a speech chunk sent at once) puts dozens in 100 ms.
  const crowded = Math.max(...speech.map((h) => speech.filter((x) => x.at >= h.at && x.at < h.at + 100).length))
  t.ok(crowded <= 12, `no bursts: at most ${crowded} packets in any 100 ms`)

  const [row] = await sessionsOf(tenant.orgId)
  t.equal(row?.channel, 'sip')
  t.equal(row?.to_phone_number, tenant.number)
  t.equal(row?.from_phone_number, '+442071838750')
  await receiver.waitFor((r) => r.json?.type === 'session.start' && r.json.session_id === row?.id)

  void p.speak(Buffer.alloc(160 * 10, 0xff))
  await p.digit('5')
  await eventually(async () => backend.requests.find((q) => q.json.type === 'data' && q.json.data?.dtmf === '5'), 3_000)
  t.pass('the RFC 4733 digit reached the agent as carrier DTMF does')

  p.bye()
  t.equal((await p.final()).status, 200, 'BYE answered')
  const ended = await eventually(async () => {
    const [r] = await sessionsOf(tenant.orgId)
    return r?.status === 'ended' ? r : undefined
  })
  t.equal(ended.end_reason, 'caller_hangup')
  await receiver.waitFor((r) => r.json?.type === 'session.end' && r.json.session_id === row?.id)
  await eventually(async () => (c.gw.gateway.sip?.liveCalls === 0 ? true : undefined))
  const recording = await eventually(async () => {
    const r = await c.gw.store.db
      .selectFrom('recordings')
      .selectAll()
      .where('session_id', '=', row?.id ?? '')
      .executeTakeFirst()
    return r?.status === 'completed' ? r : undefined
  })
  t.ok(Number(recording.total_samples) > 8000 * 0.5, `the call was recorded like a carrier call (${recording.total_samples} samples)`)
})

t.test('a phone that offers comfort noise hears the welcome as audio, then one CN packet a second, not steady silence', async (t) => {
  const p = await phone(t)
  p.invite(tenant.number.slice(1), { comfortNoise: true })
  const ok = await p.final()
  t.equal(ok.status, 200)
  p.ack(ok)
  t.match(ok.body.toString(), /m=audio \d+ RTP\/AVP 0 101 13\r\n[\s\S]*a=rtpmap:13 CN\/8000/, 'CN answered')
  const welcome = await eventually(async () => {
    const loud = p.heard.filter((h) => h.payloadType === 0 && h.payload.some((b) => (b & 0x7f) < 0x70))
    return loud.length >= 25 ? loud : undefined
  }, 5_000)
  // After the welcome the agent is quiet: its pause is CN, the first one right after the last audio packet.
  const last = await eventually(async () => {
    const cn = p.heard.filter((h) => h.payloadType === 13 && h.at > welcome[0]!.at)
    return cn.length >= 3 ? cn : undefined
  }, 6_000)
  const afterWelcome = p.heard.slice(p.heard.indexOf(last[0]!))
  const audioInPause = afterWelcome.filter((h) => h.at < last[2]!.at && h.payloadType === 0)
  t.equal(audioInPause.length, 0, 'no silence frames between the CN packets')
  const gaps = last.slice(1, 3).map((h, i) => h.at - last[i]!.at)
  // A second apart on the gateway's clock; this process also runs the gateway and may read them late or together.
  t.ok(
    gaps.every((g) => g > 500 && g < 2000),
    `about one CN a second in the pause (gaps ${gaps.map((g) => g.toFixed(0)).join(', ')} ms)`,
  )
  t.ok(
    last.every((h) => h.payload.length === 1),
    'CN payload: the noise level alone',
  )
  void p.speak(Buffer.alloc(160 * 5, 0xff))
  p.bye()
  t.equal((await p.final()).status, 200, 'BYE answered')
})

t.test('the agent hangs up: the caller gets a BYE after the farewell', async (t) => {
  backend.reply = (req) =>
    req.json.type === 'session.start'
      ? { kind: 'sse', steps: [{ data: { type: 'response.hangup', content: 'Goodbye.', turn_id: req.json.turn_id } }] }
      : sse(req.json.turn_id)
  t.teardown(() => {
    backend.reply = (req) => sse(req.json.turn_id, 'Hello.')
  })
  const p = await phone(t)
  await connect(p, tenant.number)
  const bye = await p.byes.next(5_000, 'BYE from the gateway')
  t.equal(getHeader(bye, 'Call-ID'), p.callId)
  const farewell = p.heard.filter((h) => h.payload.some((b) => (b & 0x7f) < 0x70))
  t.ok(farewell.length >= 5, `the farewell was heard before the BYE (${farewell.length} packets)`)
  const ended = await eventually(async () =>
    (await sessionsOf(tenant.orgId)).find((r) => r.status === 'ended' && r.end_reason === 'hangup'),
  )
  t.equal(ended.channel, 'sip')
})

t.test('refusals leave no session: a stranger 403, a wrong password 401 then 403, an unknown number 401 then 404', async (t) => {
  const before = (await sessionsOf(guarded.orgId)).length
  const stranger = await phone(t, '127.0.0.2')
  stranger.invite(tenant.number)
  const refused = await stranger.final()
  t.same([refused.status, refused.reason], [403, 'no SIP trunk for this address'])
  stranger.ackError(refused)

  const p = await phone(t)
  p.invite(guarded.number)
  const challenge = await p.final()
  t.equal(challenge.status, 401)
  p.retryWithDigest(challenge, guarded.number, 'pbx', 'wrong-password')
  const wrong = await p.final()
  t.same([wrong.status, wrong.reason], [403, 'bad credentials'])
  p.ackError(wrong)

  // 127.0.0.1 also has a trunk with a password: a number none of its open trunks has is challenged like that
  // trunk's own numbers, and only the right password lets it be looked up.
  const unknown = await phone(t)
  unknown.invite('+14155550000')
  const unknownChallenge = await unknown.final()
  t.equal(unknownChallenge.status, 401, 'a number nobody has is challenged like a routed one')
  unknown.retryWithDigest(unknownChallenge, '+14155550000', 'pbx', 'right-password')
  const notHere = await unknown.final()
  t.equal(notHere.status, 404, 'the right password, then the number is looked up')
  unknown.ackError(notHere)
  // A wrong password gets the same 403 whether the number is routed or not.
  const guessing = await phone(t)
  guessing.invite('+14155550000')
  guessing.retryWithDigest(await guessing.final(), '+14155550000', 'pbx', 'wrong-password')
  const wrongUnknown = await guessing.final()
  t.same([wrongUnknown.status, wrongUnknown.reason], [wrong.status, wrong.reason], 'a wrong password: 403 whatever the number')
  guessing.ackError(wrongUnknown)
  t.equal((await sessionsOf(guarded.orgId)).length, before, 'no session was stored')
  const metrics = await c.gw.request('GET', '/metrics', { key: null })
  t.match(metrics.text, /voxgate_session_refusals_total\{channel="sip",reason="unknown_source"\} 1/)
  t.match(metrics.text, /voxgate_session_refusals_total\{channel="sip",reason="not_in_service"\} 1/)
})

t.test('the right digest password connects the call to the organization of the dialled number', async (t) => {
  const p = await phone(t)
  p.invite(guarded.number)
  const challenge = await p.final()
  t.equal(challenge.status, 401)
  p.retryWithDigest(challenge, guarded.number, 'pbx', 'right-password')
  const ok = await p.final()
  t.equal(ok.status, 200)
  p.ack(ok)
  const [row] = await sessionsOf(guarded.orgId)
  t.equal(row?.channel, 'sip')
  p.bye()
  t.equal((await p.final()).status, 200)
  await eventually(async () => ((await sessionsOf(guarded.orgId))[0]?.status === 'ended' ? true : undefined))
})

t.test('a trunk without an allow-list takes digest from any address; a wrong user name gets 403', async (t) => {
  const roaming = await newTenant(c)
  await trunk(roaming.apiKey, { username: 'roamer', password: 'roaming-password' })
  const p = await phone(t, '127.0.0.2')
  p.invite(roaming.number)
  const challenge = await p.final()
  t.equal(challenge.status, 401, 'a stranger is challenged now that a trunk takes digest from anywhere')
  p.retryWithDigest(challenge, roaming.number, 'someone-else', 'roaming-password')
  const wrong = await p.final()
  t.equal(wrong.status, 403)
  p.ackError(wrong)

  const q = await phone(t, '127.0.0.2')
  q.invite(roaming.number)
  q.retryWithDigest(await q.final(), roaming.number, 'roamer', 'roaming-password')
  const ok = await q.final()
  t.equal(ok.status, 200)
  q.ack(ok)
  const [row] = await sessionsOf(roaming.orgId)
  t.equal(row?.channel, 'sip')
  q.bye()
  t.equal((await q.final()).status, 200)
})

// Last: the gateway stays drained.
t.test('a draining replica: new INVITEs get 503 with Retry-After, a live call goes on until its BYE', async (t) => {
  // A welcome of about two seconds, so it is still playing once the replica drains.
  backend.reply = (req) => sse(req.json.turn_id, 'Welcome to the line that keeps talking while the replica drains.')
  const live = await phone(t)
  await connect(live, tenant.number)
  const [row] = (await sessionsOf(tenant.orgId)).filter((r) => r.status !== 'ended')
  c.gw.gateway.sessions.drain()
  const late = await phone(t)
  late.invite(tenant.number)
  const refused = await late.final()
  t.same([refused.status, getHeader(refused, 'Retry-After')], [503, '30'])
  late.ackError(refused)
  const heard = live.heard.length
  await eventually(async () => (live.heard.length > heard + 5 ? true : undefined))
  t.pass('the live call still gets its audio')
  live.bye()
  t.equal((await live.final()).status, 200)
  const ended = await eventually(async () => (await sessionsOf(tenant.orgId)).find((r) => r.id === row?.id && r.status === 'ended'))
  t.equal(ended.end_reason, 'caller_hangup')
})
