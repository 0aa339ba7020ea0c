import t from 'tap'
import { context, end, events, MESSAGE, replyOf, run, tts, webhookHarness } from './agent-helpers.js'

t.test('SSE framing: \\r\\n, split chunks, multi-line data, comments, event/id lines, unknown fields', async (t) => {
  const { step, script } = await webhookHarness(t)
  script({
    kind: 'sse',
    eol: '\r\n',
    splitEvery: 3,
    steps: [
      { comment: ' keep-alive' },
      { data: { type: 'response.tts', content: 'Héllo 👋 ', turn_id: 't1' }, event: 'delta', id: '1' },
      { data: '{"type":"response.tts",\n"content":"line two",\n"turn_id":"t1"}' },
      { raw: 'retry: 10\r\nfoo: bar\r\n\r\n' },
      { data: { type: 'response.data', content: { step: 2 }, turn_id: 't1' }, event: 'response.tts' },
      { raw: 'data:{"type":"response.end","turn_id":"t1"}\r\n\r\n' },
    ],
  })
  const got = replyOf(await events(step, MESSAGE, context()))
  t.same(got, [
    { type: 'tts', text: 'Héllo 👋 ' },
    { type: 'tts', text: 'line two' },
    { type: 'data', content: { step: 2 } },
    { type: 'end' },
  ])
})

t.test('SSE framing: bare \\r line endings and blank data lines', async (t) => {
  const { step, script, logger } = await webhookHarness(t)
  script({ kind: 'sse', eol: '\r', steps: [{ raw: 'data:\r\r' }, tts('one'), end()] })
  t.same(replyOf(await events(step, MESSAGE, context())), [{ type: 'tts', text: 'one' }, { type: 'end' }])
  t.same(logger.lines, [], 'the final event, ended by a bare \\r at the end of the stream, was decoded')
})

t.test('streaming: the first text is yielded before the backend sends the rest', async (t) => {
  const { backend, step, script } = await webhookHarness(t)
  script({ kind: 'sse', steps: [tts('First part. '), { delayMs: 1000 }, tts('Second part.'), end()] })
  const start = Date.now()
  const got = await run(step, MESSAGE, context())
  const req = await backend.request(0)
  const first = got.find((e) => e.event.type === 'tts')
  t.ok(first, 'a tts event')
  const secondWrite = req.writes[1] as number
  t.ok((first?.at ?? Infinity) < secondWrite, 'first tts arrived before the second event was written')
  t.ok((first?.at ?? Infinity) - start < 700, 'first tts arrived well before the 1000 ms pause ended')
  t.same(replyOf(got.map((e) => e.event)), [{ type: 'tts', text: 'First part. ' }, { type: 'tts', text: 'Second part.' }, { type: 'end' }])
  const kinds = got.map((e) => e.event.type)
  t.same(kinds.slice(0, 2), ['sent', 'first_byte'])
})

t.test('hangup, with and without content; events after the terminal one are ignored', async (t) => {
  const { backend, step, script, logger } = await webhookHarness(t)
  script({ kind: 'sse', steps: [{ data: { type: 'response.hangup', content: 'Bye now!', turn_id: 't1' } }, tts('ignored')] })
  t.same(replyOf(await events(step, MESSAGE, context())), [{ type: 'hangup', text: 'Bye now!' }])

  script({ kind: 'sse', steps: [{ data: { type: 'response.hangup', turn_id: 't1' } }] })
  t.same(replyOf(await events(step, MESSAGE, context())), [{ type: 'hangup', text: '' }])
  t.ok(logger.lines.some((l) => l.level === 'warn' && /hangup without content/.test(l.message ?? '')))

  script({ kind: 'sse', keepOpen: true, steps: [end(), tts('late')] })
  t.same(replyOf(await events(step, MESSAGE, context())), [{ type: 'end' }])
  t.equal(await backend.requests[2]?.closed, 'aborted', 'the connection is released after the terminal event')
})

t.test('response.error ends the turn with agent_error and is logged', async (t) => {
  const { step, script, logger } = await webhookHarness(t)
  script({ kind: 'sse', steps: [tts('Let me check. '), { data: { type: 'response.error', error: 'db down', turn_id: 't1' } }] })
  const got = replyOf(await events(step, MESSAGE, context()))
  t.same(got, [
    { type: 'tts', text: 'Let me check. ' },
    { type: 'error', code: 'agent_error', message: 'backend reported an error: db down' },
  ])
  t.ok(logger.lines.some((l) => l.level === 'warn' && /db down/.test(l.message ?? '')))
})

t.test('malformed, unknown, wrong-turn and turn-less events end the turn with agent_bad_event', async (t) => {
  const { step, script } = await webhookHarness(t)
  const cases: Array<[string, unknown]> = [
    ['not json', '{"type":"response.tts",'],
    ['unknown type', { type: 'response.dance', turn_id: 't1' }],
    ['wrong turn', { type: 'response.tts', content: 'x', turn_id: 't0' }],
    ['no turn', { type: 'response.tts', content: 'x' }],
    ['tts without text', { type: 'response.tts', turn_id: 't1' }],
    ['array', [1, 2]],
  ]
  for (const [name, data] of cases) {
    script({ kind: 'sse', steps: [tts('a'), { data }, tts('b'), end()] })
    const got = replyOf(await events(step, MESSAGE, context()))
    t.equal(got.length, 2, name)
    t.same(got[0], { type: 'tts', text: 'a' }, name)
    t.match(got[1], { type: 'error', code: 'agent_bad_event' }, name)
  }
})

t.test('a stream without a terminal event', async (t) => {
  const { step, script, logger } = await webhookHarness(t)
  script({ kind: 'sse', steps: [tts('Spoken.')] })
  t.same(replyOf(await events(step, MESSAGE, context())), [{ type: 'tts', text: 'Spoken.' }, { type: 'end' }], 'after text: end')
  t.ok(logger.lines.some((l) => /without response.end/.test(l.message ?? '')))

  script({ kind: 'sse', steps: [{ comment: 'nothing' }] })
  t.match(replyOf(await events(step, MESSAGE, context())), [{ type: 'error', code: 'agent_incomplete' }], 'nothing said: error')

  script({ kind: 'sse', steps: [] })
  const empty = await events(step, MESSAGE, context())
  t.match(empty, [{ type: 'sent' }, { type: 'error', code: 'agent_incomplete', message: /empty body/ }])
})

t.test('data request: plain JSON replies', async (t) => {
  const { step, script } = await webhookHarness(t)
  const data = { kind: 'data', turnId: 'd1', data: { x: 1 } } as const
  script({ kind: 'json', body: { type: 'response.data', content: { shown: true }, turn_id: 'd1' } })
  t.same(await events(step, data, context()), [
    { type: 'sent' },
    { type: 'first_byte' },
    { type: 'data', content: { shown: true } },
    { type: 'end' },
  ])
  script({ kind: 'json', body: { content: [1, 2] } })
  t.same(replyOf(await events(step, data, context())), [{ type: 'data', content: [1, 2] }, { type: 'end' }])
  script({ kind: 'json', body: { ok: true } })
  t.same(replyOf(await events(step, data, context())), [{ type: 'end' }])
  script({ kind: 'status', status: 204 })
  t.same(replyOf(await events(step, data, context())), [{ type: 'end' }])
  script({ kind: 'status', status: 200 })
  t.same(replyOf(await events(step, data, context())), [{ type: 'end' }], 'empty 200')
  script({ kind: 'json', body: { type: 'response.data', content: 1, turn_id: 'other' } })
  t.match(replyOf(await events(step, data, context())), [{ type: 'error', code: 'agent_bad_event' }])
  script({ kind: 'sse', steps: [{ data: { type: 'response.tts', content: 'Noted.', turn_id: 'd1' } }, end('d1')] })
  t.same(replyOf(await events(step, data, context())), [{ type: 'tts', text: 'Noted.' }, { type: 'end' }], 'SSE accepted')
})

t.test('message request: JSON fallback replies', async (t) => {
  const { step, script } = await webhookHarness(t)
  script({ kind: 'json', body: { type: 'response.tts', content: 'Hi!', turn_id: 't1' } })
  t.same(replyOf(await events(step, MESSAGE, context())), [{ type: 'tts', text: 'Hi!' }, { type: 'end' }])
  script({
    kind: 'json',
    body: [
      { type: 'response.tts', content: 'Bye.', turn_id: 't1' },
      { type: 'response.hangup', content: 'Goodbye.', turn_id: 't1' },
      { type: 'response.tts', content: 'ignored', turn_id: 't1' },
    ],
  })
  t.same(replyOf(await events(step, MESSAGE, context())), [
    { type: 'tts', text: 'Bye.' },
    { type: 'hangup', text: 'Goodbye.' },
  ])
  script({ kind: 'json', body: { answer: 'Hi' } })
  t.match(replyOf(await events(step, MESSAGE, context())), [{ type: 'error', code: 'agent_bad_event' }])
  script({ kind: 'json', body: '{oops' })
  t.match(replyOf(await events(step, MESSAGE, context())), [{ type: 'error', code: 'agent_bad_event', message: /not valid JSON/ }])
})

t.test('welcome: an empty or plain JSON acknowledgement means the agent stays silent', async (t) => {
  const { step, script } = await webhookHarness(t)
  const welcome = { kind: 'welcome', turnId: 'w1' } as const
  script({ kind: 'status', status: 200 })
  t.same(replyOf(await events(step, welcome, context())), [{ type: 'end' }])
  script({ kind: 'json', body: { received: true } })
  t.same(replyOf(await events(step, welcome, context())), [{ type: 'end' }])
  script({ kind: 'sse', steps: [{ data: { type: 'response.tts', content: 'Welcome!', turn_id: 'w1' } }, end('w1')] })
  t.same(replyOf(await events(step, welcome, context())), [{ type: 'tts', text: 'Welcome!' }, { type: 'end' }])
})
