import {
  validatePipelineConfig,
  withWebhookUrl,
  pluginStage,
  type PluginConfig,
  type PipelineConfig,
  type UrlPolicy,
  AGENT_WEBHOOK_DEFAULTS,
} from '../../pipeline/index.js'
import type { WebhookSwap } from '../store/tunnels.js'
import type { WebhookDeadlines } from './local-tunnel.js'

function agentStep(config: unknown): PluginConfig | undefined {
  const plugins = (config as PipelineConfig | undefined)?.plugins
  return Array.isArray(plugins) ? plugins.find((p) => pluginStage(p.use) === 'agent') : undefined
}

/**
 * The tunnel's config changes, as `POST /v1/agents/{id}` with `webhook_url` makes them: the agent step becomes
 * `agent.webhook` with the tunnel URL (other webhook options kept). Restoring puts the saved step back only while
 * the agent still points at the tunnel: a change made meanwhile (a new webhook URL) wins.
 */
export function webhookSwap(policy: UrlPolicy): WebhookSwap {
  return {
    point(config, url) {
      const previous = agentStep(config)
      const r = validatePipelineConfig(withWebhookUrl(config as PipelineConfig, url), policy)
      if (!r.ok) return `the tunnel URL ${url} is not accepted as a webhook URL: ${r.errors.join('; ')}`
      return { config: r.config, previousStep: previous === undefined ? null : structuredClone(previous) }
    },
    restore(config, url, previousStep) {
      const current = agentStep(config)
      if (current?.use !== 'agent.webhook' || (current.options as { url?: string }).url !== url) return undefined
      const copy = structuredClone(config) as PipelineConfig
      const i = copy.plugins.findIndex((p) => pluginStage(p.use) === 'agent')
      if (previousStep === null || previousStep === undefined) copy.plugins.splice(i, 1)
      else copy.plugins[i] = previousStep as PluginConfig
      return copy
    },
  }
}

/**
 * The deadlines of the agent step that calls `url` (its `time_to_first_byte_ms` and `timeout_ms`, defaults where
 * unset), or undefined when the agent no longer calls it.
 */
export function webhookDeadlines(config: unknown, url: string): WebhookDeadlines | undefined {
  const step = agentStep(config)
  const options = step?.options as { url?: unknown; time_to_first_byte_ms?: unknown; timeout_ms?: unknown } | undefined
  if (step?.use !== 'agent.webhook' || options?.url !== url) return undefined
  const n = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) ? v : fallback)
  return {
    firstByteMs: n(options.time_to_first_byte_ms, AGENT_WEBHOOK_DEFAULTS.time_to_first_byte_ms),
    totalMs: n(options.timeout_ms, AGENT_WEBHOOK_DEFAULTS.timeout_ms),
  }
}
