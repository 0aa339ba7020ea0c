import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { WebhookAgentStep } from '../../pipeline/agent/webhook-agent.js'
import { agentFailureCause, exchangeFailureCause, failureDetail } from '../../pipeline/agent/turn-failure.js'
import type { BackendReply } from '../fakes/backend/fake-backend.js'
import { context, end, events, fastOptions, MESSAGE, replyOf, SECRET, tts, webhookHarness } from './agent-helpers.js'

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

const sse = (steps: Extract<BackendReply, { kind: 'sse' }>['steps'], extra: Partial<Extract<BackendReply, { kind: 'sse' }>> = {}) =>
  ({ kind: 'sse', steps, ...extra }) as const

// Each row: what the backend does, and the cause the step names for the turn's failure.
const ROWS: { name: string; reply: BackendReply; cause: string; spoke?: boolean }[] = [
  { name: 'HTTP 500', reply: { kind: 'status', status: 500, body: 'boom' }, cause: 'http_500' },
  { name: 'HTTP 404', reply: { kind: 'status', status: 404 }, cause: 'http_404' },
  { name: 'a redirect', reply: { kind: 'status', status: 302, headers: { location: '/x' } }, cause: 'http_302' },
  {
    name: 'an HTML page',
    reply: { kind: 'json', body: '<html><body>Bad gateway</body></html>', contentType: 'text/html' },
    cause: 'invalid_stream',
  },
  { name: 'a malformed event', reply: sse([{ data: '{not json' }]), cause: 'invalid_stream' },
  { name: 'an event for another turn', reply: sse([tts('hi', 'other-turn'), end()]), cause: 'invalid_stream' },
  {
    name: 'a stream broken after text',
    reply: sse([tts('Let me '), { delayMs: 100 }, { destroy: true }]),
    cause: 'stream_broken',
    spoke: true,
  },
  { name: 'a stream broken before text', reply: sse([{ comment: 'hello' }, { destroy: true }]), cause: 'stream_broken' },
  { name: 'an empty body', reply: sse([]), cause: 'empty_reply' },
  { name: 'only keep-alives', reply: sse([{ comment: 'ping' }]), cause: 'empty_reply' },
  { name: 'response.error', reply: sse([{ data: { type: 'response.error', message: 'db down', turn_id: 't1' } }]), cause: 'backend_error' },
  { name: 'a reset before any response', reply: { kind: 'reset' }, cause: 'connect_failed' },
  { name: 'no byte in time', reply: { kind: 'hang' }, cause: 'timeout' },
]

t.test('each way a webhook fails is named by its cause', async (t) => {
  const { backend, script } = await webhookHarness(t)
  const step = new WebhookAgentStep(fastOptions(backend, 600, 5000), { webhookSecret: SECRET })
  for (const row of ROWS) {
    script(row.reply)
    const got = replyOf(await events(step, MESSAGE, context()))
    const error = got.at(-1)
    t.equal(error?.type, 'error', `${row.name}: ends with an error`)
    if (error?.type !== 'error') continue
    t.equal(agentFailureCause(error), row.cause, `${row.name}: ${row.cause} (${error.message})`)
    t.equal(
      got.some((e) => e.type === 'tts'),
      row.spoke === true,
      `${row.name}: text before the failure`,
    )
  }
})

t.test('a refused connection is connect_refused, on a private address connect_failed', async (t) => {
  const port = await closedPort()
  const options = fastOptions({ url: `http://127.0.0.1:${port}/agent` }, 600, 5000)
  const step = new WebhookAgentStep(options, { webhookSecret: SECRET, privateTarget: () => false })
  const [error] = replyOf(await events(step, MESSAGE, context()))
  t.ok(error?.type === 'error' && agentFailureCause(error) === 'connect_refused', JSON.stringify(error))
  // Loopback is private unless the gateway says otherwise: a refusal there is not told from other failures.
  const [hidden] = replyOf(await events(new WebhookAgentStep(options, { webhookSecret: SECRET }), MESSAGE, context()))
  t.ok(hidden?.type === 'error' && agentFailureCause(hidden) === 'connect_failed', JSON.stringify(hidden))
})

t.test('causes from codes alone, and from exchange failures', async (t) => {
  t.equal(exchangeFailureCause('unreachable', 'connection refused'), 'connect_refused')
  t.equal(exchangeFailureCause('unreachable', 'dns error'), 'connect_failed')
  t.equal(exchangeFailureCause('unreachable', undefined), 'connect_failed')
  t.equal(exchangeFailureCause('first_byte_timeout', undefined), 'timeout')
  t.equal(exchangeFailureCause('total_timeout', undefined), 'timeout')
  t.equal(exchangeFailureCause('cut_off', 'connection reset'), 'stream_broken')
  t.equal(exchangeFailureCause('too_large', undefined), 'invalid_stream')
  // A step that names no cause (the built-in LLM step) still gets one from its code.
  t.equal(agentFailureCause({ code: 'llm_timeout', message: 'x' }), 'timeout')
  t.equal(agentFailureCause({ code: 'llm_http_error', message: 'LLM endpoint replied HTTP 401: bad key' }), 'http_401')
  t.equal(agentFailureCause({ code: 'llm_unreachable', message: 'x' }), 'connect_failed')
  t.equal(agentFailureCause({ code: 'agent_incomplete', message: 'x' }), 'stream_broken')
  t.equal(agentFailureCause({ code: 'agent_error', message: 'x' }), 'backend_error')
  t.equal(agentFailureCause({ code: 'llm_bad_stream', message: 'x' }), 'invalid_stream')
  t.equal(agentFailureCause({ code: 'agent_timeout', message: 'x', cause: 'http_503' }), 'http_503', 'a named cause wins')
})

t.test('a failure detail is one bounded line', async (t) => {
  t.equal(failureDetail('backend replied\nHTTP 500\u0000 '), 'backend replied HTTP 500')
  const long = failureDetail('x'.repeat(500))
  t.equal(long.length, 200)
  t.ok(long.endsWith('…'))
})
