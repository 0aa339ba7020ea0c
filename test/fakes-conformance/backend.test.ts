// Customer backend: a reply built from the SPEC's table of backend events, through our webhook agent step.
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { WebhookAgentStep } from '../../pipeline/agent/webhook-agent.js'
import { agentWebhookOptionsSchema } from '../../pipeline/options/agent-options.js'
import { context, events, MESSAGE, replyOf, SECRET } from '../agent/agent-helpers.js'

const REPLY = readFileSync(new URL('../fixtures/backend/message-reply.sse', import.meta.url), 'utf8')

t.test('response.tts is spoken text and response.end ends the turn', async (t) => {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.end(REPLY)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const { port } = server.address() as AddressInfo
  const options = agentWebhookOptionsSchema({ allowInsecureLoopback: true }).parse({ url: `http://127.0.0.1:${port}/agent` })
  const step = new WebhookAgentStep(options, { webhookSecret: SECRET })
  const reply = replyOf(await events(step, MESSAGE, context()))
  t.same(reply.at(-1), { type: 'end' })
  t.equal(
    reply.flatMap((e) => (e.type === 'tts' ? [e.text] : [])).join(''),
    'Hello! How can I help?',
    'the words of response.tts, in order',
  )
})
