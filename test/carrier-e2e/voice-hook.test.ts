import t from 'tap'
import { createHash } from 'node:crypto'
import WebSocket from 'ws'
import twilio from 'twilio'
import { carrierSignature, postSignedForm } from '../fakes/carrier/sign.js'
import { newCallSid } from '../fakes/carrier/phone-simulator.js'
import { callTenant, eventually, newTenant, PUBLIC_URL, sessionOfCall, startCarrierGateway } from './carrier-setup.js'

const c = await startCarrierGateway()
t.teardown(() => c.gw.close())
const TOKEN = 'carrier-auth-token-1'

t.test('an inbound call connects: markup, stream, session row, caller hangup ends it', async (t) => {
  const tenant = await newTenant(c, { carrier: { authToken: TOKEN } })
  const callSid = newCallSid()
  const r = await callTenant(c, tenant, { callSid, toCountry: 'US' })
  t.equal(r.outcome, 'connected')
  if (r.outcome !== 'connected') return
  const verb = r.verbs[0]
  t.equal(verb?.verb, 'Connect')
  if (verb?.verb === 'Connect') t.match(verb.stream.url, /^wss:\/\/voice\.example\.test\/v1\/agents\/carrier\/websocket\/csk_/)
  const row = await eventually(async () => {
    const s = await sessionOfCall(c, callSid)
    return s?.status === 'connected' ? s : undefined
  })
  t.match(row, {
    channel: 'carrier',
    direction: 'inbound',
    agent_id: tenant.agentId,
    from_phone_number: '+442071838750',
    from_phone_country: 'GB',
    to_phone_number: tenant.number,
    to_phone_country: 'US',
    call_sid: callSid,
  })
  t.ok(row.lease_expires_at, 'holds a concurrency slot')
  await eventually(async () => ((await sessionOfCall(c, callSid))?.call_status === 'in-progress' ? true : undefined))
  await r.call.hangup()
  const ended = await eventually(async () => {
    const s = await sessionOfCall(c, callSid)
    return s?.status === 'ended' ? s : undefined
  })
  t.equal(ended.end_reason, 'caller_hangup')
  t.equal(ended.lease_expires_at, null, 'slot released')
  t.same(r.call.errors, [], 'the gateway spoke the carrier protocol')
})

t.test('content type, no caching, and a new stream URL per request', async (t) => {
  const tenant = await newTenant(c, { carrier: { authToken: TOKEN } })
  const urls: string[] = []
  for (let i = 0; i < 2; i++) {
    const form = {
      CallSid: newCallSid(),
      AccountSid: 'AC1',
      From: '+442071838750',
      To: tenant.number,
      Direction: 'inbound',
      CallStatus: 'ringing',
    }
    const res = await postSignedForm({ postTo: c.rewrite(c.hookUrl), signedUrl: c.hookUrl, form, authToken: TOKEN })
    t.equal(res.status, 200)
    t.match(res.contentType, /^text\/xml/)
    urls.push(/url="([^"]+)"/.exec(res.body)?.[1] ?? '')
  }
  t.not(urls[0], urls[1])
  const res = await fetch(c.rewrite(c.hookUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: '',
  })
  t.equal(res.status, 200, 'an empty hook is a refusal, not an error')
})

t.test('signature: required with credentials, checked against PUBLIC_URL', async (t) => {
  const tenant = await newTenant(c, { carrier: { authToken: TOKEN } })
  const form = { CallSid: newCallSid(), AccountSid: 'AC1', From: '+442071838750', To: tenant.number, Direction: 'inbound' }
  const missing = await postSignedForm({ postTo: c.rewrite(c.hookUrl), signedUrl: c.hookUrl, form, authToken: undefined })
  t.equal(missing.status, 403)
  t.match(JSON.parse(missing.body), { error: /signature/ })
  const wrong = await postSignedForm({ postTo: c.rewrite(c.hookUrl), signedUrl: c.hookUrl, form, authToken: 'not-the-token' })
  t.equal(wrong.status, 403)
  // Signed for the address the request physically reached (a proxy's Host): not what the carrier signs.
  const internal = await postSignedForm({ postTo: c.rewrite(c.hookUrl), signedUrl: c.rewrite(c.hookUrl), form, authToken: TOKEN })
  t.equal(internal.status, 403)
  // The default port spelled out is the same URL.
  const withPort = await postSignedForm({
    postTo: c.rewrite(c.hookUrl),
    signedUrl: `${PUBLIC_URL}:443/v1/agents/carrier/twiml`,
    form,
    authToken: TOKEN,
  })
  t.equal(withPort.status, 200)
  // A query string is part of what is signed.
  const q = '?tenant=a%20b'
  const withQuery = await postSignedForm({ postTo: c.rewrite(c.hookUrl) + q, signedUrl: c.hookUrl + q, form, authToken: TOKEN })
  t.equal(withQuery.status, 200)
  const queryNotSigned = await postSignedForm({ postTo: c.rewrite(c.hookUrl) + q, signedUrl: c.hookUrl, form, authToken: TOKEN })
  t.equal(queryNotSigned.status, 403)
  // Independent vector: HMAC-SHA1 over URL + sorted name/value pairs.
  const manual = carrierSignature(TOKEN, c.hookUrl, form)
  const res = await fetch(c.rewrite(c.hookUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-carrier-signature': manual, host: 'evil.example' },
    body: new URLSearchParams(form).toString(),
  })
  t.equal(res.status, 200, 'a changed Host header does not matter')
})

t.test("a Twilio account's own signature: its helper library signs, X-Twilio-Signature carries it", async (t) => {
  const tenant = await newTenant(c, { carrier: { authToken: TOKEN } })
  const form = { CallSid: newCallSid(), AccountSid: 'AC1', From: '+442071838750', To: tenant.number, Direction: 'inbound' }
  // twilio-node's signing, as Twilio signs every webhook it sends (and as twilio.validateRequest checks it).
  const signed = twilio.getExpectedTwilioSignature(TOKEN, c.hookUrl, form)
  t.ok(twilio.validateRequest(TOKEN, signed, c.hookUrl, form), 'the library accepts its own signature')
  const post = (headers: Record<string, string>) =>
    fetch(c.rewrite(c.hookUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'TwilioProxy/1.1', ...headers },
      body: new URLSearchParams(form).toString(),
    })
  const real = await post({ 'X-Twilio-Signature': signed })
  t.equal(real.status, 200, 'the header a real account sends')
  t.match(await real.text(), /<Connect><Stream url="wss:/)
  t.equal((await post({ 'X-Carrier-Signature': signed })).status, 200, "the SPEC's header, the same value")
  t.equal((await post({})).status, 403, 'neither header: unsigned')
  const forged = twilio.getExpectedTwilioSignature('another-token', c.hookUrl, form)
  t.equal((await post({ 'X-Twilio-Signature': forged })).status, 403, 'signed with another token')
  // A JSON body as twilio-node's validateRequestWithBody checks it: the URL with bodySHA256 signed, no params.
  const body = JSON.stringify({ ...form, CallSid: newCallSid() })
  const signedUrl = `${c.hookUrl}?bodySHA256=${createHash('sha256').update(body).digest('hex')}`
  const jsonSignature = twilio.getExpectedTwilioSignature(TOKEN, signedUrl, {})
  t.ok(twilio.validateRequestWithBody(TOKEN, jsonSignature, signedUrl, body), 'the library accepts the JSON signature')
  const json = await fetch(c.rewrite(signedUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Twilio-Signature': jsonSignature },
    body,
  })
  t.equal(json.status, 200)
})

t.test('without stored credentials the hook is accepted unsigned', async (t) => {
  const tenant = await newTenant(c)
  const r = await callTenant(c, tenant)
  t.equal(r.outcome, 'connected')
  if (r.outcome === 'connected') await r.call.hangup()
})

t.test('JSON body signed with bodySHA256', async (t) => {
  const tenant = await newTenant(c, { carrier: { authToken: TOKEN } })
  const body = JSON.stringify({ CallSid: newCallSid(), From: '+442071838750', To: tenant.number, Direction: 'inbound' })
  const hash = createHash('sha256').update(body).digest('hex')
  const signedUrl = `${c.hookUrl}?bodySHA256=${hash}`
  const post = (sig: string, b = body) =>
    fetch(c.rewrite(signedUrl), { method: 'POST', headers: { 'content-type': 'application/json', 'x-carrier-signature': sig }, body: b })
  const ok = await post(carrierSignature(TOKEN, signedUrl, {}))
  t.equal(ok.status, 200)
  t.match(await ok.text(), /<Connect><Stream url="wss:/)
  const tampered = await post(carrierSignature(TOKEN, signedUrl, {}), body.replace('inbound', 'outbound-dial'))
  t.equal(tampered.status, 403, 'the body must match its hash')
  const unhashed = await fetch(c.rewrite(c.hookUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-carrier-signature': carrierSignature(TOKEN, c.hookUrl, {}) },
    body,
  })
  t.equal(unhashed.status, 403, 'a JSON body without bodySHA256 is not covered by the signature')
})

t.test('refusals speak and hang up', async (t) => {
  await t.test('unassigned number', async (t) => {
    const r = await callTenant(c, { orgId: '', apiKey: '', agentId: '', webhookSecret: '', number: '+12025550143', authToken: undefined })
    t.match(r, { outcome: 'refused', said: 'This number is not in service. Goodbye.' })
  })
  await t.test('zero balance', async (t) => {
    const tenant = await newTenant(c, { balance: 0, carrier: { authToken: TOKEN } })
    const r = await callTenant(c, tenant)
    t.match(r, { outcome: 'refused', said: 'We are sorry, this service is temporarily unavailable. Please try again later. Goodbye.' })
  })
  await t.test('carrier clients disabled', async (t) => {
    const tenant = await newTenant(c, { config: (cfg) => ({ ...cfg, clients: { ...cfg.clients, carrier: false } }) })
    const r = await callTenant(c, tenant)
    t.match(r, { outcome: 'refused', said: 'This number is not taking calls at the moment. Goodbye.' })
  })
  await t.test('concurrency limit, counting calls between hook and stream', async (t) => {
    const tenant = await newTenant(c, { limit: 1, carrier: { authToken: TOKEN } })
    const first = await callTenant(c, tenant)
    t.equal(first.outcome, 'connected')
    const second = await callTenant(c, tenant)
    t.match(second, { outcome: 'refused', said: 'All our agents are busy. Please call again later. Goodbye.' })
    if (first.outcome === 'connected') await first.call.hangup()
    const third = await eventually(async () => {
      const r = await callTenant(c, tenant)
      if (r.outcome === 'connected') return r
      return undefined
    })
    await third.call.hangup()
  })
})

t.test('a repeated hook for one call keeps one session; only the newest key opens the stream', async (t) => {
  const tenant = await newTenant(c, { limit: 1, carrier: { authToken: TOKEN } })
  const form = {
    CallSid: newCallSid(),
    AccountSid: 'AC1',
    From: '+442071838750',
    To: tenant.number,
    Direction: 'inbound',
    CallStatus: 'ringing',
  }
  const a = await postSignedForm({ postTo: c.rewrite(c.hookUrl), signedUrl: c.hookUrl, form, authToken: TOKEN })
  const b = await postSignedForm({ postTo: c.rewrite(c.hookUrl), signedUrl: c.hookUrl, form, authToken: TOKEN })
  t.match(b.body, /<Connect>/, 'the repeat is not refused by the limit of 1')
  const rows = await c.gw.store.db.selectFrom('sessions').selectAll().where('call_sid', '=', form.CallSid).execute()
  t.equal(rows.length, 1)
  const urlOf = (xml: string) => c.rewrite(/url="([^"]+)"/.exec(xml)?.[1] ?? '')
  const status = (url: string) =>
    new Promise<number>((resolve) => {
      const ws = new WebSocket(url)
      ws.once('open', () => {
        resolve(101)
        ws.close()
      })
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0))
      ws.once('error', () => undefined)
    })
  t.equal(await status(urlOf(a.body)), 401, 'the first key was replaced')
  t.equal(await status(urlOf(b.body)), 101)
  t.equal(await status(urlOf(b.body)), 401, 'a key opens one stream only')
})
