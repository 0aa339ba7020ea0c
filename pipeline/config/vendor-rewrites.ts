import { AGENT_WEBHOOK_DEFAULTS, AGENT_WEBHOOK_EVENTS, type AgentWebhookOptions } from '../options/agent-options.js'
import { fallbackOptionsSchema, holdingOptionsSchema } from '../options/fallback-options.js'
import { pluginStage, type PluginConfig } from './plugins-schema.js'
import type { PipelineConfig } from './schema.js'
import { sttVendorAOptionsSchema, sttVendorBOptionsSchema } from '../options/stt-options.js'
import { ttsLocalOptionsSchema } from '../options/tts-options.js'
import { sttOpenAiCompatibleOptionsSchema, ttsOpenAiCompatibleOptionsSchema } from '../options/openai-compatible-options.js'

/**
 * Which vendor credentials this gateway has (an adapter without a key cannot run), per stage and vendor name
 * (`stt.vendor_a` is `stt: { vendor_a }`); a vendor missing here has no key.
 */
export interface VendorAvailability {
  stt: Readonly<Record<string, boolean>>
  tts: Readonly<Record<string, boolean>>
}

/**
 * Routes the agent to the customer backend: any `agent.*` step becomes `agent.webhook` with `url`, keeping
 * the other options of an existing `agent.webhook`. The URL is not checked here; validate the result.
 */
export function withWebhookUrl(config: PipelineConfig, url: string): PipelineConfig {
  const copy = structuredClone(config)
  if (!Array.isArray(copy.plugins)) return copy
  const existing = copy.plugins.find((p) => p.use === 'agent.webhook')
  const options: AgentWebhookOptions = {
    events: [...AGENT_WEBHOOK_EVENTS],
    ...AGENT_WEBHOOK_DEFAULTS,
    fallback: fallbackOptionsSchema.parse(undefined),
    holding: holdingOptionsSchema.parse(undefined),
    ...existing?.options,
    debug_failures: existing?.options.debug_failures ?? false,
    url,
  }
  const webhook: PluginConfig = { use: 'agent.webhook', options }
  const agentIndex = copy.plugins.findIndex((p) => pluginStage(p.use) === 'agent')
  if (agentIndex >= 0) {
    copy.plugins = copy.plugins.filter((p, i) => i === agentIndex || pluginStage(p.use) !== 'agent')
    copy.plugins[copy.plugins.findIndex((p) => pluginStage(p.use) === 'agent')] = webhook
  } else {
    const ttsIndex = copy.plugins.findIndex((p) => pluginStage(p.use) === 'tts')
    copy.plugins.splice(ttsIndex >= 0 ? ttsIndex : copy.plugins.length, 0, webhook)
  }
  return copy
}

/**
 * Swaps vendors this gateway has no key for, so an agent created on a fresh machine can speak:
 * `tts.vendor_a` becomes `tts.local`; an unavailable STT vendor becomes the other one when that one is
 * available (language and key terms carried over); with neither cloud recognizer but an OpenAI-compatible server
 * of the operator's own (`STT_OPENAI_COMPATIBLE_URL`), that one; without `TTS_VENDOR_A_API_KEY` but with
 * `TTS_OPENAI_COMPATIBLE_URL`, `tts.vendor_a` and `tts.local` become `tts.openai_compatible`. Applied to templates. With no STT vendor at all the STT step is kept: no offline recogniser exists, and the session
 * reports the missing key when it starts.
 */
export function withAvailableVendors(config: PipelineConfig, caps: VendorAvailability): PipelineConfig {
  const copy = structuredClone(config)
  if (!Array.isArray(copy.plugins)) return copy
  copy.plugins = copy.plugins.map((plugin) => swapPlugin(plugin, caps))
  return copy
}

function swapPlugin(plugin: PluginConfig, caps: VendorAvailability): PluginConfig {
  // A speech server of the operator's own beats the offline voice, for a template that chose it for want of a key
  // as much as for one that wanted a vendor.
  const ownTts = caps.tts.openai_compatible === true && !caps.tts.vendor_a
  if ((plugin.use === 'tts.vendor_a' || plugin.use === 'tts.local') && ownTts) {
    return { use: 'tts.openai_compatible', options: ttsOpenAiCompatibleOptionsSchema.parse({}) }
  }
  if (plugin.use === 'tts.vendor_a' && !caps.tts.vendor_a) {
    return { use: 'tts.local', options: ttsLocalOptionsSchema.parse({}) }
  }
  const cloudStt = plugin.use === 'stt.vendor_a' || plugin.use === 'stt.vendor_b'
  if (cloudStt && !caps.stt.vendor_a && !caps.stt.vendor_b && caps.stt.openai_compatible) {
    // No cloud recognizer here but a server of the operator's own: use it, with the agent's words as vocabulary.
    const terms = plugin.use === 'stt.vendor_a' ? plugin.options.keyterms : plugin.options.word_boost
    const language = plugin.use === 'stt.vendor_a' ? plugin.options.language.slice(0, 2).toLowerCase() : undefined
    return {
      use: 'stt.openai_compatible',
      options: sttOpenAiCompatibleOptionsSchema.parse({
        ...(language !== undefined && /^[a-z]{2}$/.test(language) && language !== 'mu' && { language }),
        ...(terms !== undefined && { vocabulary: terms }),
      }),
    }
  }
  if (plugin.use === 'stt.vendor_a' && !caps.stt.vendor_a && caps.stt.vendor_b) {
    const english = plugin.options.language.toLowerCase().startsWith('en')
    return {
      use: 'stt.vendor_b',
      options: sttVendorBOptionsSchema.parse({
        speech_model: english ? 'universal-streaming-english' : 'universal-streaming-multilingual',
        ...(plugin.options.keyterms === undefined ? {} : { word_boost: plugin.options.keyterms }),
      }),
    }
  }
  if (plugin.use === 'stt.vendor_b' && !caps.stt.vendor_b && caps.stt.vendor_a) {
    const english = plugin.options.speech_model === 'universal-streaming-english'
    return {
      use: 'stt.vendor_a',
      options: sttVendorAOptionsSchema.parse({
        model_id: 'nova-3',
        language: english ? 'en' : 'multi',
        ...(plugin.options.word_boost === undefined ? {} : { keyterms: plugin.options.word_boost }),
      }),
    }
  }
  return plugin
}
