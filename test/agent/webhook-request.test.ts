import t from 'tap'
import { WebhookAgentStep } from '../../pipeline/agent/webhook-agent.js'
import { context, end, events, fastOptions, MESSAGE, replyOf, SECRET, sleep, tts, webhookHarness } from './agent-helpers.js'

t.test('message request: path, headers, independent signature check, body, reply', async (t) => {
  const { backend, step } = await webhookHarness(t, { custom_headers: { 'X-Api-Token': 'tok_123', 'X-Tenant': 'acme' } })
  const ctx = context({
    customMetadata: { plan: 'gold', n: 2 },
    metadata: { ticket: 'T-1' },
    agentId: 'agt_1',
    startedAt: '2026-01-01T00:00:00.000Z',
    fromPhoneNumber: '+15550001111',
    toPhoneNumber: '+15550002222',
  })
  const got = await events(step, MESSAGE, ctx)
  t.same(got, [{ type: 'sent' }, { type: 'first_byte' }, { type: 'tts', text: 'ok' }, { type: 'end' }])
  const req = await backend.request(0)
  t.equal(req.method, 'POST')
  t.equal(req.path, '/api/agent')
  t.equal(req.headers['content-type'], 'application/json')
  t.equal(req.headers.accept, 'text/event-stream')
  t.equal(req.headers['user-agent'], 'voxgate-webhooks/1')
  t.equal(req.headers['x-api-token'], 'tok_123')
  t.equal(req.headers['x-tenant'], 'acme')
  t.match(req.headers['service-signature'], /^t=\d+,v1=[a-f0-9]{64}$/)
  t.ok(req.signatureValid, 'HMAC-SHA256 of "t.<raw body>" verified with node:crypto')
  t.same(JSON.parse(req.raw), {
    type: 'message',
    session_id: 'sess_1',
    conversation_id: 'conv_1',
    turn_id: 't1',
    custom_metadata: { plan: 'gold', n: 2 },
    metadata: { ticket: 'T-1' },
    text: 'Hello there',
    from_phone_number: '+15550001111',
    to_phone_number: '+15550002222',
  })
  t.equal(
    Object.keys(JSON.parse(req.raw)).join(','),
    'type,session_id,conversation_id,turn_id,custom_metadata,metadata,text,from_phone_number,to_phone_number',
    'agent_id and started_at go on session.start only',
  )
  t.equal(await req.closed, 'finished')
})

t.test('welcome and data requests: types and bodies; optional fields left out, metadata always an object', async (t) => {
  const { backend, step, script } = await webhookHarness(t)
  await events(step, { kind: 'welcome', turnId: 'a1' }, context())
  t.same(JSON.parse((await backend.request(0)).raw), {
    type: 'session.start',
    session_id: 'sess_1',
    conversation_id: 'conv_1',
    turn_id: 'a1',
    metadata: {},
  })
  script({ kind: 'json', body: {} })
  await events(step, { kind: 'data', turnId: 'd1', data: { button: 'yes' } }, context())
  const req = await backend.request(1)
  t.same(JSON.parse(req.raw), {
    type: 'data',
    session_id: 'sess_1',
    conversation_id: 'conv_1',
    turn_id: 'd1',
    metadata: {},
    data: { button: 'yes' },
  })
  t.equal(req.headers.accept, 'application/json')
  t.ok(req.signatureValid)
})

t.test('session.start carries agent_id and started_at, as the lifecycle session.start does', async (t) => {
  const { backend, step } = await webhookHarness(t)
  const ctx = context({
    agentId: 'agt_1',
    startedAt: '2026-01-01T00:00:00.000Z',
    metadata: { ticket: 'T-1' },
    customMetadata: { region: 'eu' },
  })
  await events(step, { kind: 'welcome', turnId: 'a1' }, ctx)
  const body = JSON.parse((await backend.request(0)).raw)
  t.same(body, {
    type: 'session.start',
    session_id: 'sess_1',
    conversation_id: 'conv_1',
    turn_id: 'a1',
    agent_id: 'agt_1',
    started_at: '2026-01-01T00:00:00.000Z',
    custom_metadata: { region: 'eu' },
    metadata: { ticket: 'T-1' },
  })
})

t.test("session_webhook's custom headers go with agent requests; the step's own win a clash, whatever the case", async (t) => {
  const { backend, step } = await webhookHarness(
    t,
    { custom_headers: { 'x-tenant': 'from-agent', 'X-Agent': 'a' } },
    { sessionHeaders: { 'X-Tenant': 'from-session', 'X-Session': 's' } },
  )
  await events(step, MESSAGE, context())
  const req = await backend.request(0)
  t.equal(req.headers['x-tenant'], 'from-agent', "one header, the step's value")
  t.equal(req.headers['x-agent'], 'a')
  t.equal(req.headers['x-session'], 's')
  t.ok(req.signatureValid)
})

t.test('handles follows options.events', async (t) => {
  const { step } = await webhookHarness(t)
  t.same([...step.handles].sort(), ['data', 'message', 'welcome'])
  const only = await webhookHarness(t, { events: ['message'] })
  t.same([...only.step.handles], ['message'])
})

t.test('redirects are not followed', async (t) => {
  const { backend, step, script } = await webhookHarness(t)
  script((req) =>
    req.path === '/api/agent'
      ? { kind: 'status', status: 307, headers: { location: '/elsewhere' } }
      : { kind: 'sse', steps: [tts('followed'), end()] },
  )
  t.same(replyOf(await events(step, MESSAGE, context())), [
    { type: 'error', code: 'agent_http_error', message: 'backend replied HTTP 307 (redirects are not followed)', cause: 'http_307' },
  ])
  await sleep(100)
  t.equal(backend.requests.length, 1)
})

t.test('unreachable backend -> agent_unreachable in fixed words, without the URL or the error code', async (t) => {
  const { backend } = await webhookHarness(t)
  const url = backend.url.replace('/api/agent', '/secret-token-path')
  await backend.close()
  // Told it is not private (as the gateway would for a public address), the step names what happened.
  const step = new WebhookAgentStep({ ...fastOptions(backend, 1000, 2000), url }, { webhookSecret: SECRET, privateTarget: () => false })
  const got = await events(step, MESSAGE, context())
  t.match(got, [{ type: 'sent' }, { type: 'error', code: 'agent_unreachable', message: 'request failed: connection refused' }])
  t.notMatch(JSON.stringify(got), /secret-token-path|ECONNREFUSED/)
})
