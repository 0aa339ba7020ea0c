// OpenAI chat completions streaming: the documented example stream, replayed to our LLM agent step.
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { decodeChatStreamData } from '../../pipeline/agent/openai-chat-codec.js'
import { OpenAiLlmAgentStep } from '../../pipeline/agent/llm-agent.js'
import { agentLlmOptionsSchema } from '../../pipeline/options/agent-options.js'
import { context, events } from '../agent/agent-helpers.js'

const STREAM = readFileSync(new URL('../fixtures/openai/chat-completion-stream.txt', import.meta.url), 'utf8')

t.test('each documented chunk decodes to its content delta, the finish_reason chunk finishes, [DONE] is done', async (t) => {
  const data = STREAM.split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => decodeChatStreamData(line.slice('data: '.length)))
  t.same(data, [
    { kind: 'delta', text: '', finished: false },
    { kind: 'delta', text: 'Hello', finished: false },
    { kind: 'delta', text: '', finished: true },
    { kind: 'done' },
  ])
})

t.test('the documented stream, served as text/event-stream, becomes one spoken reply and the end of the turn', async (t) => {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.end(STREAM)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const { port } = server.address() as AddressInfo
  const step = new OpenAiLlmAgentStep(agentLlmOptionsSchema.parse({ provider: 'openai' }), {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    apiKey: 'sk-test',
  })
  t.same(await events(step, { kind: 'message', turnId: 't1', text: 'Hello!' }, context()), [
    { type: 'sent' },
    { type: 'first_byte' },
    { type: 'tts', text: 'Hello' },
    { type: 'end' },
  ])
})
