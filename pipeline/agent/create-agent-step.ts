import type { AgentLlmOptions, AgentWebhookOptions } from '../options/agent-options.js'
import { silentLogger, type PipelineLogger } from '../runtime/logger.js'
import type { AgentStep } from './agent-step.js'
import type { FetchLike } from './http-exchange.js'
import { OpenAiLlmAgentStep } from './llm-agent.js'
import { ScriptedAgentStep } from './scripted-agent.js'
import { WebhookAgentStep } from './webhook-agent.js'

/**
 * A validated `agent.*` plugin entry of the pipeline configuration (config/plugins-schema.ts's entries of these two
 * ids; spelled out here because the configuration is composed above the agent steps).
 */
export type AgentPluginConfig = { use: 'agent.llm'; options: AgentLlmOptions } | { use: 'agent.webhook'; options: AgentWebhookOptions }

/** What the agent steps need from the gateway. */
export interface AgentStepDeps {
  /** The agent's `webhook_secret` (signs `agent.webhook` requests). */
  webhookSecret: string
  /** `session_webhook.custom_headers`, sent with `agent.webhook` requests too (the SPEC: every webhook request). */
  sessionHeaders?: Record<string, string> | undefined
  /** The OpenAI-compatible endpoint of `agent.llm` provider `openai`; without a key the scripted agent stands in. */
  llm: { baseUrl: string; apiKey: string | undefined }
  logger?: PipelineLogger | undefined
  fetch?: FetchLike | undefined
  /** The fetch `agent.webhook` requests go through (the gateway's egress policy); default `fetch`. */
  webhookFetch?: FetchLike | undefined
  /** Whether an `agent.webhook` URL reached a private address (the gateway's egress policy knows); default: loopback. */
  webhookPrivateTarget?: ((url: string) => boolean) | undefined
  /** The session's clock for the scripted agent. */
  now?: (() => number) | undefined
}

/**
 * The agent step for a plugin entry. `agent.llm` with provider `openai` but no API key configured falls back to
 * the offline `scripted` agent, with one warning when the step is created, so a demo works without a key.
 */
export function createAgentStep(plugin: AgentPluginConfig, deps: AgentStepDeps): AgentStep {
  const logger = deps.logger ?? silentLogger
  if (plugin.use === 'agent.webhook') {
    return new WebhookAgentStep(plugin.options, {
      webhookSecret: deps.webhookSecret,
      sessionHeaders: deps.sessionHeaders,
      logger,
      fetch: deps.webhookFetch ?? deps.fetch,
      privateTarget: deps.webhookPrivateTarget,
    })
  }
  return createLlmAgentStep(plugin.options, deps)
}

/**
 * The `agent.llm` step: the OpenAI-compatible model with provider `openai` and a key, else the offline `scripted`
 * agent (with one warning when `openai` was asked for but no key is configured).
 */
export function createLlmAgentStep(options: AgentLlmOptions, deps: AgentStepDeps): AgentStep {
  const logger = deps.logger ?? silentLogger
  if (options.provider === 'openai') {
    const apiKey = deps.llm.apiKey
    if (apiKey !== undefined && apiKey !== '') {
      // The operator's endpoint (a local model, perhaps), not an organization's: its failures are told in full.
      const privateTarget = () => false
      return new OpenAiLlmAgentStep(options, { baseUrl: deps.llm.baseUrl, apiKey, logger, fetch: deps.fetch, privateTarget })
    }
    logger.warn(
      { plugin: 'agent.llm', provider: options.provider, fallback: 'scripted' },
      'agent.llm provider openai has no API key configured; using the scripted demo agent instead',
    )
  }
  return new ScriptedAgentStep(options, { now: deps.now })
}
