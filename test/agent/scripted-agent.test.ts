import t from 'tap'
import { createAgentStep } from '../../pipeline/agent/create-agent-step.js'
import { OpenAiLlmAgentStep } from '../../pipeline/agent/llm-agent.js'
import { SCRIPTED_LINES, ScriptedAgentStep } from '../../pipeline/agent/scripted-agent.js'
import { WebhookAgentStep } from '../../pipeline/agent/webhook-agent.js'
import { agentLlmOptionsSchema, agentWebhookOptionsSchema } from '../../pipeline/options/agent-options.js'
import { context, events, memoryLogger } from './agent-helpers.js'

// 2024-03-05 15:04 UTC
const NOW = Date.UTC(2024, 2, 5, 15, 4, 0)
const step = new ScriptedAgentStep(agentLlmOptionsSchema.parse({ welcome_message: 'Welcome to the demo!' }), {
  now: () => NOW,
})
const say = (text: string) => events(step, { kind: 'message', turnId: 't1', text }, context())

t.test('welcome speaks welcome_message; an empty one just ends', async (t) => {
  t.same(await events(step, { kind: 'welcome', turnId: 'w' }, context()), [{ type: 'tts', text: 'Welcome to the demo!' }, { type: 'end' }])
  const quiet = new ScriptedAgentStep(agentLlmOptionsSchema.parse({ welcome_message: '' }))
  t.same(await events(quiet, { kind: 'welcome', turnId: 'w' }, context()), [{ type: 'end' }])
  t.same([...step.handles].sort(), ['message', 'welcome'])
})

t.test('rules', async (t) => {
  t.same(await say('Hello there!'), [{ type: 'tts', text: SCRIPTED_LINES.greeting }, { type: 'end' }])
  t.same(await say('Good morning'), [{ type: 'tts', text: SCRIPTED_LINES.greeting }, { type: 'end' }])
  t.same(await say('So, what can you do?'), [{ type: 'tts', text: SCRIPTED_LINES.capabilities }, { type: 'end' }])
  t.same(await say("What's the time?"), [{ type: 'tts', text: "It's 3:04 PM UTC." }, { type: 'end' }])
  t.same(await say('What time is it'), [{ type: 'tts', text: "It's 3:04 PM UTC." }, { type: 'end' }])
  t.same(await say('OK, bye!'), [{ type: 'hangup', text: SCRIPTED_LINES.farewell }])
  t.same(await say('Goodbye.'), [{ type: 'hangup', text: SCRIPTED_LINES.farewell }])
  t.same(await say('I like trains'), [{ type: 'tts', text: 'You said: I like trains' }, { type: 'end' }])
  t.same(await say('  '), [{ type: 'tts', text: SCRIPTED_LINES.silence }, { type: 'end' }])
  t.same(await say('Hi'), await say('Hi'), 'deterministic')
})

t.test('time zone and abort', async (t) => {
  const paris = new ScriptedAgentStep(agentLlmOptionsSchema.parse({}), { now: () => NOW, timeZone: 'Europe/Paris' })
  t.same(await events(paris, { kind: 'message', turnId: 't', text: 'what time is it' }, context()), [
    { type: 'tts', text: "It's 4:04 PM." },
    { type: 'end' },
  ])
  t.same(await events(step, { kind: 'message', turnId: 't', text: 'hi' }, context(), AbortSignal.abort()), [])
})

t.test('createAgentStep picks the step; openai without a key falls back to scripted and warns once', async (t) => {
  const webhookOptions = agentWebhookOptionsSchema({}).parse({ url: 'https://backend.example/agent' })
  const deps = { webhookSecret: 's', llm: { baseUrl: 'http://127.0.0.1:9/v1', apiKey: undefined } }
  t.type(createAgentStep({ use: 'agent.webhook', options: webhookOptions }, deps), WebhookAgentStep)
  t.type(createAgentStep({ use: 'agent.llm', options: agentLlmOptionsSchema.parse({}) }, deps), ScriptedAgentStep)

  const logger = memoryLogger()
  const openai = agentLlmOptionsSchema.parse({ provider: 'openai' })
  const fallback = createAgentStep({ use: 'agent.llm', options: openai }, { ...deps, logger, now: () => NOW })
  t.type(fallback, ScriptedAgentStep)
  t.equal(logger.lines.filter((l) => l.level === 'warn').length, 1)
  t.match(logger.lines[0]?.message, /no API key/)
  t.same(await events(fallback, { kind: 'message', turnId: 't', text: 'what time is it' }, context()), [
    { type: 'tts', text: "It's 3:04 PM UTC." },
    { type: 'end' },
  ])
  t.equal(logger.lines.length, 1, 'no further warnings per turn')

  const keyed = createAgentStep({ use: 'agent.llm', options: openai }, { ...deps, llm: { baseUrl: 'http://x/v1', apiKey: 'k' } })
  t.type(keyed, OpenAiLlmAgentStep)
})
