import t, { type Test } from 'tap'
import { OpenAiLlmAgentStep, type LlmAgentDeps } from '../../pipeline/agent/llm-agent.js'
import { agentLlmOptionsSchema } from '../../pipeline/options/agent-options.js'
import { startFakeOpenAi } from '../fakes/openai/fake-openai.js'
import { context, events, memoryLogger, replyOf, run } from './agent-helpers.js'

const KEY = 'sk-test-0123456789'
const MESSAGE = { kind: 'message', turnId: 't9', text: 'What is voxgate?' } as const

async function setup(t: Test, raw: Record<string, unknown> = {}, deps: Partial<LlmAgentDeps> = {}) {
  const fake = await startFakeOpenAi({ apiKey: KEY })
  t.teardown(() => fake.close())
  const options = agentLlmOptionsSchema.parse({ provider: 'openai', ...raw })
  const logger = memoryLogger()
  const step = new OpenAiLlmAgentStep(options, { baseUrl: fake.baseUrl, apiKey: KEY, logger, ...deps })
  return { fake, step, logger }
}

t.test('request: path, bearer key, model, system prompt, bounded history, user text, temperature', async (t) => {
  const { fake, step } = await setup(t, {
    model_id: 'gpt-test',
    system_prompt: 'Be brief.',
    temperature: 0.3,
    max_history_turns: 2,
  })
  const history = [
    { role: 'user', text: 'old question' },
    { role: 'assistant', text: 'old answer' },
    { role: 'user', text: 'Hi' },
    { role: 'assistant', text: 'Hello! How can I help?' },
  ] as const
  await events(step, MESSAGE, context({ history }))
  const req = fake.requests[0]
  t.equal(req?.path, '/v1/chat/completions')
  t.equal(req?.headers.authorization, `Bearer ${KEY}`)
  t.equal(req?.headers.accept, 'text/event-stream')
  t.same(req?.json, {
    model: 'gpt-test',
    stream: true,
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello! How can I help?' },
      { role: 'user', content: 'What is voxgate?' },
    ],
    temperature: 0.3,
  })
})

t.test('defaults: the default system prompt, no temperature; a trailing slash in the base URL', async (t) => {
  const { fake } = await setup(t)
  const step = new OpenAiLlmAgentStep(agentLlmOptionsSchema.parse({ provider: 'openai' }), {
    baseUrl: `${fake.baseUrl}/`,
    apiKey: KEY,
  })
  await events(step, MESSAGE, context())
  t.equal(fake.requests[0]?.path, '/v1/chat/completions')
  t.equal(fake.requests[0]?.json.model, 'gpt-4o-mini')
  t.equal(fake.requests[0]?.json.messages[0].role, 'system')
  t.notOk('temperature' in (fake.requests[0]?.json ?? {}))
})

t.test('streamed deltas become whole-word tts events, [DONE] ends the turn', async (t) => {
  const { step } = await setup(t)
  const got = await events(step, MESSAGE, context())
  t.same(got, [
    { type: 'sent' },
    { type: 'first_byte' },
    { type: 'tts', text: 'Hello ' },
    { type: 'tts', text: 'from ' },
    { type: 'tts', text: 'the ' },
    { type: 'tts', text: 'fake ' },
    { type: 'tts', text: 'model.' },
    { type: 'end' },
  ])
  t.equal(
    replyOf(got)
      .flatMap((e) => (e.type === 'tts' ? [e.text] : []))
      .join(''),
    'Hello from the fake model.',
  )
})

t.test('streaming: the first words arrive before the model has finished', async (t) => {
  const { fake, step } = await setup(t)
  fake.script = () => ({ deltas: ['One ', 'two ', 'three.'], delayMs: 600 })
  const start = Date.now()
  const got = await run(step, MESSAGE, context())
  const first = got.find((e) => e.event.type === 'tts')
  t.same(first?.event, { type: 'tts', text: 'One ' })
  t.ok((first?.at ?? Infinity) - start < 450, 'first word before the next delta was sent')
  t.ok((got.at(-1)?.at ?? 0) - start >= 1150, 'the whole answer took the scripted time')
})

t.test('a wrong key -> llm_http_error 401 without echoing the key', async (t) => {
  const { fake } = await setup(t)
  const step = new OpenAiLlmAgentStep(agentLlmOptionsSchema.parse({ provider: 'openai' }), {
    baseUrl: fake.baseUrl,
    apiKey: 'sk-wrong-key',
  })
  const got = await events(step, MESSAGE, context())
  t.same(got, [
    { type: 'sent' },
    { type: 'error', code: 'llm_http_error', message: 'LLM endpoint replied HTTP 401 (invalid_api_key)', cause: 'http_401' },
  ])
  t.notMatch(JSON.stringify(got), /sk-|wrong/)
})

t.test('stream problems -> llm_bad_stream; a finish_reason without [DONE] still ends', async (t) => {
  const { fake, step } = await setup(t)
  fake.script = () => ({ deltas: ['Cut ', 'short'], omitDone: true, omitFinish: true })
  t.match(replyOf(await events(step, MESSAGE, context())), [
    { type: 'tts', text: 'Cut ' },
    { type: 'error', code: 'llm_bad_stream', message: /before \[DONE\]/ },
  ])
  fake.script = () => ({ deltas: ['All ', 'done'], omitDone: true })
  t.same(replyOf(await events(step, MESSAGE, context())), [{ type: 'tts', text: 'All ' }, { type: 'tts', text: 'done' }, { type: 'end' }])
  fake.script = () => ({ deltas: [], raw: 'data: {not json}\n\n' })
  t.match(replyOf(await events(step, MESSAGE, context())), [{ type: 'error', code: 'llm_bad_stream' }])
  fake.script = () => ({ deltas: [], raw: 'data: {"error":{"message":"overloaded","type":"server_error"}}\n\n' })
  t.same(replyOf(await events(step, MESSAGE, context())), [
    { type: 'error', code: 'llm_bad_stream', message: 'LLM stream reported an error: server_error' },
  ])
})

t.test('time to first byte -> llm_timeout; abort mid-stream stops quietly', async (t) => {
  const { fake } = await setup(t)
  const options = agentLlmOptionsSchema.parse({ provider: 'openai' })
  const step = new OpenAiLlmAgentStep(options, { baseUrl: fake.baseUrl, apiKey: KEY, limits: { firstByteMs: 200 } })
  fake.script = () => ({ deltas: [], hang: true })
  t.match(await events(step, MESSAGE, context()), [{ type: 'sent' }, { type: 'error', code: 'llm_timeout' }])
  t.equal(await fake.requests[0]?.closed, 'aborted')

  fake.script = () => ({ deltas: ['First ', 'second ', 'third.'], delayMs: 2000 })
  const controller = new AbortController()
  const seen: string[] = []
  for await (const event of step.respond(MESSAGE, context(), { signal: controller.signal })) {
    seen.push(event.type)
    if (event.type === 'tts') controller.abort()
  }
  t.same(seen, ['sent', 'first_byte', 'tts'])
  t.equal(await fake.requests[1]?.closed, 'aborted')
})

t.test('welcome speaks welcome_message without calling the model; empty welcome just ends', async (t) => {
  const { fake, step } = await setup(t, { welcome_message: 'Hi, I am the model agent.' })
  t.same(await events(step, { kind: 'welcome', turnId: 'w1' }, context()), [
    { type: 'tts', text: 'Hi, I am the model agent.' },
    { type: 'end' },
  ])
  const quiet = await setup(t, { welcome_message: '' })
  t.same(await events(quiet.step, { kind: 'welcome', turnId: 'w1' }, context()), [{ type: 'end' }])
  t.equal(fake.requests.length + quiet.fake.requests.length, 0)
  t.same([...step.handles].sort(), ['message', 'welcome'])
})
