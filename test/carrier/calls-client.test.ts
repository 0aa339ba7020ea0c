import { createServer } from 'node:net'
import t, { type Test } from 'tap'
import { CarrierApiError } from '../../carrier/carrier.js'
import { TwilioCallsClient } from '../../carrier/twilio/calls-client.js'
import { FakeCallsApi } from '../fakes/carrier/fake-calls-api.js'

const call = {
  to: '+15550002222',
  from: '+15550001111',
  url: 'https://gw.example.com/v1/agents/carrier/twiml',
  statusCallback: 'https://gw.example.com/v1/agents/carrier/status',
  timeoutSec: 30,
}

async function setup(t: Test, clientOptions: ConstructorParameters<typeof TwilioCallsClient>[1] = {}) {
  const api = await FakeCallsApi.start({ outcome: { kind: 'manual' } })
  t.teardown(() => api.close())
  const client = new TwilioCallsClient(
    { accountSid: api.accountSid, authToken: api.authToken, apiBaseUrl: `${api.baseUrl}/` },
    { baseDelayMs: 5, maxDelayMs: 50, ...clientOptions },
  )
  return { api, client }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (err) {
    return err
  }
  throw new Error('expected a rejection')
}

t.test('createCall sends the carrier request shape', async (t) => {
  const { api, client } = await setup(t)
  const created = await client.createCall(call)
  t.match(created.sid, /^CA[0-9a-f]{32}$/)
  t.equal(created.status, 'queued')
  t.equal(api.requests.length, 1)
  const [req] = api.requests
  t.equal(req?.method, 'POST')
  t.equal(req?.path, `/2010-04-01/Accounts/${api.accountSid}/Calls.json`)
  t.equal(req?.headers['content-type'], 'application/x-www-form-urlencoded')
  const auth = Buffer.from(String(req?.headers.authorization).replace(/^Basic /, ''), 'base64').toString()
  t.equal(auth, `${api.accountSid}:${api.authToken}`)
  t.same(req?.form, {
    To: '+15550002222',
    From: '+15550001111',
    Url: call.url,
    Method: 'POST',
    StatusCallback: call.statusCallback,
    StatusCallbackMethod: 'POST',
    StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
    Timeout: '30',
  })
  t.equal(api.calls.get(created.sid)?.params.to, '+15550002222')
})

t.test('hangup posts Status=completed to the call resource', async (t) => {
  const { api, client } = await setup(t)
  const created = await client.createCall(call)
  const ended = await client.hangup(created.sid)
  t.equal(ended.sid, created.sid)
  t.equal(ended.status, 'canceled', 'a call not yet answered is canceled')
  const req = api.requests[1]
  t.equal(req?.path, `/2010-04-01/Accounts/${api.accountSid}/Calls/${created.sid}.json`)
  t.same(req?.form, { Status: 'completed' })
})

t.test('bad credentials: auth error, no retry, token never in the message', async (t) => {
  const { api } = await setup(t)
  const client = new TwilioCallsClient(
    { accountSid: api.accountSid, authToken: 'not-the-token-0123456789', apiBaseUrl: api.baseUrl },
    { baseDelayMs: 5 },
  )
  const err = await rejection(client.createCall(call))
  t.ok(err instanceof CarrierApiError)
  t.match(err, { code: 'carrier_auth_failed', status: 401, carrierCode: 20003, attempts: 1 })
  t.notMatch(String((err as Error).message), /not-the-token/)
  t.notMatch(JSON.stringify(err), /not-the-token/)
  t.equal(api.requests.length, 1)
})

t.test('carrier validation errors map to CarrierApiError', async (t) => {
  const { api, client } = await setup(t)
  const err = await rejection(client.createCall({ ...call, to: 'not-a-number' }))
  t.match(err, {
    name: 'CarrierApiError',
    code: 'carrier_rejected',
    status: 400,
    carrierCode: 21211,
    moreInfo: 'https://www.twilio.com/docs/errors/21211',
    message: /'To' number not-a-number is not a valid phone number/,
  })
  t.equal(api.requests.length, 1, 'a 400 is not retried')
})

t.test('scripted 400 21211 and token redaction', async (t) => {
  const { api, client } = await setup(t)
  api.failNext({ status: 400, code: 21211, message: `Invalid 'To' (auth ${api.authToken})` })
  const err = await rejection(client.createCall(call))
  t.match(err, { code: 'carrier_rejected', carrierCode: 21211 })
  t.notMatch((err as Error).message, new RegExp(api.authToken))
  t.match((err as Error).message, /\[redacted\]/)
})

t.test('429 (20429) is retried with backoff, then succeeds', async (t) => {
  const { api, client } = await setup(t)
  api.failNext({ status: 429, code: 20429, message: 'Too Many Requests' })
  const created = await client.createCall(call)
  t.match(created.sid, /^CA/)
  t.equal(api.requests.length, 2)
})

t.test('429 retries are bounded', async (t) => {
  const { api, client } = await setup(t, { maxRetries: 2 })
  api.failNext({ status: 429, code: 20429, message: 'Too Many Requests', times: 10 })
  const err = await rejection(client.createCall(call))
  t.match(err, { code: 'carrier_rate_limited', status: 429, carrierCode: 20429, attempts: 3 })
  t.equal(api.requests.length, 3)
})

t.test('Retry-After is honoured, capped by maxDelayMs', async (t) => {
  const { api, client } = await setup(t, { maxDelayMs: 150 })
  api.failNext({ status: 429, code: 20429, headers: { 'retry-after': '30' } })
  const started = performance.now()
  await client.createCall(call)
  const elapsed = performance.now() - started
  t.ok(elapsed >= 140 && elapsed < 2000, `waited ${elapsed.toFixed(0)} ms`)
})

t.test('abort: in flight and during backoff', async (t) => {
  const { api, client } = await setup(t, { maxDelayMs: 10_000 })
  api.failNext({ delayMs: 1000 })
  const inFlight = new AbortController()
  setTimeout(() => inFlight.abort(), 30)
  let started = performance.now()
  const err1 = await rejection(client.createCall({ ...call, signal: inFlight.signal }))
  t.match(err1, { name: 'AbortError' })
  t.ok(performance.now() - started < 500, 'rejects promptly')

  api.failNext({ status: 429, code: 20429, headers: { 'retry-after': '5' } })
  const backoff = new AbortController()
  setTimeout(() => backoff.abort(new Error('session ended')), 50)
  started = performance.now()
  const err2 = await rejection(client.createCall({ ...call, signal: backoff.signal }))
  t.match(err2, { message: 'session ended' })
  t.ok(performance.now() - started < 1000, 'backoff sleep is cut short')

  const already = AbortSignal.abort()
  const before = api.requests.length
  t.match(await rejection(client.hangup('CA1', { signal: already })), { name: 'AbortError' })
  t.equal(api.requests.length, before, 'nothing sent once aborted')
})

t.test('request timeout: createCall is not resent, hangup is', async (t) => {
  const { api, client } = await setup(t, { requestTimeoutMs: 100 })
  api.failNext({ delayMs: 400 })
  const err = await rejection(client.createCall(call))
  t.match(err, { code: 'carrier_timeout', status: 0 })
  t.equal(api.requests.length, 1, 'the call may exist: never place it twice')

  const created = await client.createCall(call)
  api.failNext({ delayMs: 400 })
  const before = api.requests.length
  const ended = await client.hangup(created.sid)
  t.equal(ended.sid, created.sid)
  // At least one retry; on a starved machine the retry may time out too and be retried again.
  t.ok(api.requests.length - before >= 2, `hangup is idempotent: retried (${api.requests.length - before} requests)`)
})

t.test('network errors: hangup retried; createCall only when nothing was sent', async (t) => {
  const { api, client } = await setup(t)
  const created = await client.createCall(call)
  api.failNext({ dropConnection: true })
  const before = api.requests.length
  await client.hangup(created.sid)
  t.equal(api.requests.length - before, 2)

  api.failNext({ dropConnection: true })
  const err = await rejection(client.createCall(call))
  t.match(err, { code: 'carrier_unavailable', status: 0 })
  t.equal(api.requests.length - before, 3, 'connection dropped after sending: not resent')

  // A port nobody listens on: the request never left, so it is safe to retry.
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port
      s.close(() => resolve(p))
    })
  })
  const refused = new TwilioCallsClient(
    { accountSid: api.accountSid, authToken: api.authToken, apiBaseUrl: `http://127.0.0.1:${port}` },
    { maxRetries: 2, baseDelayMs: 5 },
  )
  const err2 = await rejection(refused.createCall(call))
  t.match(err2, { code: 'carrier_unavailable', attempts: 3, message: /ECONNREFUSED/ })
})

t.test('5xx with a non-JSON body', async (t) => {
  const { api, client } = await setup(t)
  api.failNext({ status: 502 })
  const err = await rejection(client.createCall(call))
  t.match(err, { code: 'carrier_unavailable', status: 502 })
  t.equal(api.requests.length, 1, 'a 5xx on create is not resent')
})
