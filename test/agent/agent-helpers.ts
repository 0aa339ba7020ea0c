// Shared helpers of the agent step tests (not a test file itself: no `.test.` in the name).
import type { Test } from 'tap'
import type { AgentContext, AgentEvent, AgentRequest, AgentStep } from '../../pipeline/agent/agent-step.js'
import { WebhookAgentStep, type WebhookAgentDeps } from '../../pipeline/agent/webhook-agent.js'
import { agentWebhookOptionsSchema, type WebhookStepOptions } from '../../pipeline/options/agent-options.js'
import type { PipelineLogger } from '../../pipeline/runtime/logger.js'
import { startFakeBackend, type BackendReply, type BackendRequest } from '../fakes/backend/fake-backend.js'

/** An event with the time it arrived. */
export interface TimedEvent {
  event: AgentEvent
  at: number
}

/** Runs one request to completion, recording when each event arrived. */
export async function run(
  step: AgentStep,
  request: AgentRequest,
  context: AgentContext,
  signal: AbortSignal = new AbortController().signal,
): Promise<TimedEvent[]> {
  const out: TimedEvent[] = []
  for await (const event of step.respond(request, context, { signal })) out.push({ event, at: Date.now() })
  return out
}

/** The events alone. */
export async function events(step: AgentStep, request: AgentRequest, context: AgentContext, signal?: AbortSignal): Promise<AgentEvent[]> {
  return (await run(step, request, context, signal)).map((e) => e.event)
}

/** The events without the `sent`/`first_byte` bookkeeping. */
export function replyOf(list: AgentEvent[]): AgentEvent[] {
  return list.filter((e) => e.type !== 'sent' && e.type !== 'first_byte')
}

/** A logger that keeps every line. */
export function memoryLogger(): PipelineLogger & { lines: Array<{ level: string; fields: object; message?: string }> } {
  const lines: Array<{ level: string; fields: object; message?: string }> = []
  const at = (level: string) => (fields: object, message?: string) => {
    lines.push({ level, fields, ...(message !== undefined ? { message } : {}) })
  }
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}

/** A plain session context. */
export function context(extra: Partial<AgentContext> = {}): AgentContext {
  return { sessionId: 'sess_1', conversationId: 'conv_1', history: [], ...extra }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Signing secret shared by the webhook tests and the fake backend. */
export const SECRET = 'whsec_test_secret'

/** The message request most webhook tests send. */
export const MESSAGE = { kind: 'message', turnId: 't1', text: 'Hello there' } as const

/** A fake backend and a webhook step pointed at it; `script` sets how the backend answers. */
export async function webhookHarness(t: Test, raw: Record<string, unknown> = {}, deps: Partial<WebhookAgentDeps> = {}) {
  const backend = await startFakeBackend({ secret: SECRET })
  t.teardown(() => backend.close())
  const parsed = agentWebhookOptionsSchema({ allowInsecureLoopback: true }).parse({ url: backend.url, ...raw })
  const logger = memoryLogger()
  const step = new WebhookAgentStep(parsed, { webhookSecret: SECRET, logger, ...deps })
  const script = (reply: BackendReply | ((request: BackendRequest) => BackendReply)) => {
    backend.reply = typeof reply === 'function' ? reply : () => reply
  }
  return { backend, step, logger, script }
}

/** Options with deadlines below the schema's minimums, to keep timeout tests fast. */
export function fastOptions(backend: { url: string }, ttfb: number, total: number): WebhookStepOptions {
  return { url: backend.url, events: ['message', 'data', 'welcome'], time_to_first_byte_ms: ttfb, timeout_ms: total }
}

/** An SSE step carrying `response.tts`. */
export const tts = (content: string, turn_id = 't1') => ({ data: { type: 'response.tts', content, turn_id } })

/** An SSE step carrying `response.end`. */
export const end = (turn_id = 't1') => ({ data: { type: 'response.end', turn_id } })
