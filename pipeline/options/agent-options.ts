import { z } from 'zod'
import { FALLBACK_DEFAULTS, fallbackOptionsSchema, holdingOptionsSchema } from './fallback-options.js'
import { customHeaders } from './http-headers.js'
import { distinctList, integerBetween, nonEmptyString, numberBetween } from './rules.js'
import { webhookUrl, type UrlPolicy } from './webhook-url.js'

/** System prompt the built-in LLM step uses when none is configured. */
export const DEFAULT_SYSTEM_PROMPT =
  'You are a friendly, concise voice assistant. Answer in one or two short spoken sentences, ' +
  'without lists, markdown or emoji, and ask a question when the request is unclear.'

/** Opening line the built-in LLM step speaks when none is configured. */
export const DEFAULT_WELCOME_MESSAGE = 'Hello! How can I help you today?'

/** Options of `agent.llm`, the built-in demo LLM step. */
export const agentLlmOptionsSchema = z
  .strictObject({
    provider: z.enum(['openai', 'scripted']).default('scripted'),
    model_id: nonEmptyString(200).default('gpt-4o-mini'),
    system_prompt: z.string().max(20000).default(DEFAULT_SYSTEM_PROMPT),
    // An empty welcome message means the agent waits for the caller to speak first.
    welcome_message: z.string().max(2000).default(DEFAULT_WELCOME_MESSAGE),
    temperature: numberBetween(0, 2).optional(),
    max_history_turns: integerBetween(1, 200).default(20),
  })
  .prefault({})

/** Options of `agent.llm` after defaults are filled. */
export type AgentLlmOptions = z.output<typeof agentLlmOptionsSchema>

/** Agent webhook event types, in the SPEC's order; `message` is mandatory. */
export const AGENT_WEBHOOK_EVENTS = ['message', 'data', 'welcome'] as const

/** One of {@link AGENT_WEBHOOK_EVENTS}. */
export type AgentWebhookEvent = (typeof AGENT_WEBHOOK_EVENTS)[number]

/** Defaults of the optional `agent.webhook` options. */
export const AGENT_WEBHOOK_DEFAULTS = {
  time_to_first_byte_ms: 10000,
  timeout_ms: 120000,
  reply_timeout_ms: FALLBACK_DEFAULTS.reply_timeout_ms,
} as const

/** Options of `agent.webhook`, which routes turns to the customer backend; built per URL policy. */
export function agentWebhookOptionsSchema(policy: UrlPolicy) {
  const options = z
    .strictObject({
      url: webhookUrl(policy),
      events: distinctList(AGENT_WEBHOOK_EVENTS)
        .refine((events) => events.includes('message'), { error: 'must include "message"' })
        .default([...AGENT_WEBHOOK_EVENTS]),
      custom_headers: customHeaders().optional(),
      time_to_first_byte_ms: numberBetween(500, 60000).default(AGENT_WEBHOOK_DEFAULTS.time_to_first_byte_ms),
      timeout_ms: numberBetween(1000, 600000).default(AGENT_WEBHOOK_DEFAULTS.timeout_ms),
      // An addition: end of the caller's turn -> the first speakable text; past it the fallback is spoken.
      reply_timeout_ms: integerBetween(1000, 60000).default(AGENT_WEBHOOK_DEFAULTS.reply_timeout_ms),
      fallback: fallbackOptionsSchema,
      holding: holdingOptionsSchema,
      // Off: a failure's stored detail says the status and a fixed reason, never what the target replied. On: the
      // first line of a non-2xx body too, except from a private address (the gateway's own network).
      debug_failures: z.boolean().default(false),
    })
    .superRefine((options, ctx) => {
      if (options.time_to_first_byte_ms > options.timeout_ms) {
        ctx.addIssue({
          code: 'custom',
          path: ['time_to_first_byte_ms'],
          message: 'must not be greater than timeout_ms',
        })
      }
    })
  // Missing options are checked as {}, so the error names the missing url rather than the options object.
  return z.preprocess((value) => (value === undefined ? {} : value), options)
}

/** Options of `agent.webhook` after defaults are filled. */
export type AgentWebhookOptions = z.output<ReturnType<typeof agentWebhookOptionsSchema>>

/** The options the webhook step itself reads (the fallback and holding settings are the pipeline's). */
export type WebhookStepOptions = Pick<AgentWebhookOptions, 'url' | 'events' | 'custom_headers' | 'time_to_first_byte_ms' | 'timeout_ms'> &
  Partial<Pick<AgentWebhookOptions, 'debug_failures'>>
