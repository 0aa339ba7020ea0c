import t from 'tap'
import { WebhookAgentStep } from '../../pipeline/agent/webhook-agent.js'
import { context, end, events, fastOptions, MESSAGE, replyOf, SECRET, tts, webhookHarness } from './agent-helpers.js'

t.test('time to first byte: no byte in time -> agent_timeout, request aborted', async (t) => {
  const { backend, script } = await webhookHarness(t)
  // 600 ms: long enough for the request to reach the fake on a loaded machine, so its abort can be seen there.
  const step = new WebhookAgentStep(fastOptions(backend, 600, 5000), { webhookSecret: SECRET })
  script({ kind: 'hang' })
  const start = Date.now()
  const got = await events(step, MESSAGE, context())
  const elapsed = Date.now() - start
  t.match(got, [{ type: 'sent' }, { type: 'error', code: 'agent_timeout', message: /no response within 600 ms/ }])
  t.equal(got.length, 2)
  t.ok(elapsed >= 590 && elapsed < 3000, `timed out after ${elapsed} ms`)
  t.equal(await (await backend.request(0)).closed, 'aborted')

  // SSE headers alone are not the first byte of the reply: the first body chunk is.
  script({ kind: 'sse', keepOpen: true, steps: [{ delayMs: 2000 }] })
  const headersOnly = await events(step, MESSAGE, context())
  t.match(headersOnly, [{ type: 'sent' }, { type: 'error', code: 'agent_timeout' }])
})

t.test('total timeout: a reply that never finishes -> agent_timeout after timeout_ms', async (t) => {
  const { backend, script } = await webhookHarness(t)
  // The first byte comes at once, so its own bound is not what this tests: 500 ms of it leaves a busy machine room
  // (at 200 ms a CI run on a slow VM timed the first byte out instead, 2026-11-27); the total is still 600 ms.
  const step = new WebhookAgentStep(fastOptions(backend, 500, 600), { webhookSecret: SECRET })
  script({ kind: 'sse', keepOpen: true, steps: [tts('Thinking...'), { delayMs: 3000 }, end()] })
  const start = Date.now()
  const got = await events(step, MESSAGE, context())
  const elapsed = Date.now() - start
  t.match(got, [
    { type: 'sent' },
    { type: 'first_byte' },
    { type: 'tts', text: 'Thinking...' },
    { type: 'error', code: 'agent_timeout', message: /600 ms/ },
  ])
  t.ok(elapsed >= 590 && elapsed < 2000, `timed out after ${elapsed} ms`)
  t.equal(await (await backend.request(0)).closed, 'aborted')
})

t.test('abort mid-stream: the request is cancelled and nothing more is yielded', async (t) => {
  const { backend, step, script } = await webhookHarness(t)
  script({ kind: 'sse', steps: [tts('One. '), { delayMs: 3000 }, tts('Two.'), end()] })
  const controller = new AbortController()
  const got: string[] = []
  const start = Date.now()
  for await (const event of step.respond(MESSAGE, context(), { signal: controller.signal })) {
    got.push(event.type)
    if (event.type === 'tts') controller.abort()
  }
  t.same(got, ['sent', 'first_byte', 'tts'])
  t.ok(Date.now() - start < 1000, 'the iterator ended at once')
  t.equal(await (await backend.request(0)).closed, 'aborted', 'the backend saw the connection close')
})

t.test('abort before any byte, before starting, and by breaking out of the loop', async (t) => {
  const { backend, step, script } = await webhookHarness(t)
  script({ kind: 'hang' })
  const controller = new AbortController()
  setTimeout(() => controller.abort(), 100)
  t.same(await events(step, MESSAGE, context(), controller.signal), [{ type: 'sent' }])
  t.equal(await (await backend.request(0)).closed, 'aborted')

  t.same(await events(step, MESSAGE, context(), AbortSignal.abort()), [], 'already aborted: no request')
  t.equal(backend.requests.length, 1)

  script({ kind: 'sse', steps: [tts('One. '), { delayMs: 3000 }, end()] })
  for await (const event of step.respond(MESSAGE, context(), { signal: new AbortController().signal })) {
    if (event.type === 'tts') break
  }
  t.equal(await (await backend.request(1)).closed, 'aborted', 'break releases the request')
})

t.test('non-2xx replies -> agent_http_error with the status, never the body', async (t) => {
  const { step, script, logger } = await webhookHarness(t, {}, { privateTarget: () => false })
  script({ kind: 'status', status: 500, body: 'INTERNAL-ONLY: db_password=hunter2' })
  t.same(replyOf(await events(step, MESSAGE, context())), [
    { type: 'error', code: 'agent_http_error', message: 'backend replied HTTP 500', cause: 'http_500' },
  ])
  script({ kind: 'status', status: 404 })
  t.same(replyOf(await events(step, MESSAGE, context())), [
    { type: 'error', code: 'agent_http_error', message: 'backend replied HTTP 404', cause: 'http_404' },
  ])
  t.notMatch(JSON.stringify(logger.lines), /hunter2|INTERNAL-ONLY/, 'nor in the log')
})

t.test('debug_failures: the first line of the body, bounded, for the failure detail only; never from a private address', async (t) => {
  const open = await webhookHarness(t, { debug_failures: true }, { privateTarget: () => false })
  open.script({ kind: 'status', status: 500, body: `Internal\u0007 error: ${'x'.repeat(5000)}\nsecond line` })
  const [error] = replyOf(await events(open.step, MESSAGE, context()))
  t.match(error, { type: 'error', code: 'agent_http_error', message: 'backend replied HTTP 500', debugDetail: /^Internal +error: x+…$/ })
  t.notMatch(JSON.stringify(error), /\\u0007/, 'control characters stripped')
  t.ok(error?.type === 'error' && (error.debugDetail?.length ?? 0) <= 201, 'bounded')
  t.notMatch(JSON.stringify(error), /second line/, 'the first line only')
  t.notMatch(JSON.stringify(open.logger.lines), /Internal error/, 'never logged')
  open.script({ kind: 'json', body: '{"type": "db_password=hunter2", "turn_id": "t1"}' })
  t.match(replyOf(await events(open.step, MESSAGE, context())), [
    { type: 'error', code: 'agent_bad_event', message: 'an event of an unknown type', debugDetail: 'db_password=hunter2' },
  ])

  // The default: a loopback target is private, and so is whatever the gateway says is.
  for (const deps of [{}, { privateTarget: () => true }]) {
    const closed = await webhookHarness(t, { debug_failures: true }, deps)
    closed.script({ kind: 'status', status: 403, body: 'INTERNAL-ONLY: db_password=hunter2' })
    const [hidden] = replyOf(await events(closed.step, MESSAGE, context()))
    t.same(hidden, { type: 'error', code: 'agent_http_error', message: 'backend replied HTTP 403', cause: 'http_403' })
    closed.script({ kind: 'json', body: '{"type": "db_password=hunter2", "turn_id": "t1"}' })
    t.notMatch(JSON.stringify(replyOf(await events(closed.step, MESSAGE, context()))), /hunter2/, 'a 2xx body is not quoted either')
  }
})

t.test('size limits: one event and the whole reply', async (t) => {
  const { step, script } = await webhookHarness(t)
  script({ kind: 'sse', steps: [tts('fine'), tts('y'.repeat(70 * 1024)), end()] })
  t.match(replyOf(await events(step, MESSAGE, context())), [
    { type: 'tts', text: 'fine' },
    { type: 'error', code: 'agent_reply_too_large', message: /65536 characters/ },
  ])

  script({ kind: 'sse', splitEvery: 1000, steps: [{ raw: `data: ${'z'.repeat(80 * 1024)}` }] })
  t.match(replyOf(await events(step, MESSAGE, context())), [{ type: 'error', code: 'agent_reply_too_large' }], 'unterminated line')

  const small = await webhookHarness(t, {}, { limits: { maxReplyBytes: 4096 } })
  small.script({ kind: 'sse', steps: Array.from({ length: 100 }, (_, i) => [tts(`word ${i} `), { delayMs: 2 }]).flat() })
  const got = replyOf(await events(small.step, MESSAGE, context()))
  t.match(got.at(-1), { type: 'error', code: 'agent_reply_too_large', message: /4096 bytes/ })
  t.ok(got.length > 10 && got.length < 100, 'the text before the limit was streamed')
})
