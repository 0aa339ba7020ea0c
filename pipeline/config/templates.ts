import type { PipelineConfig } from './schema.js'
import { parsePipelineConfig } from './validate.js'

export { withAvailableVendors, withWebhookUrl, type VendorAvailability } from './vendor-rewrites.js'

/** A built-in agent template; `config` is complete (every default filled). */
export interface AgentTemplate {
  id: string
  name: string
  description: string
  config: PipelineConfig
}

/** The template used when an agent is created without `template_id`. */
export const DEFAULT_TEMPLATE_ID = 'voice-agent-default'

// Templates accept phone calls as well as browsers: voxgate is telephony-first, and a number assigned to an
// agent created from a template should simply work.
const clients = { browser: true, carrier: true }

function template(id: string, name: string, description: string, config: unknown): AgentTemplate {
  return { id, name, description, config: parsePipelineConfig(config) }
}

/** Every built-in template, seeded into the store at start. */
export const TEMPLATES: AgentTemplate[] = [
  template(
    DEFAULT_TEMPLATE_ID,
    'Voice agent (recommended)',
    'Multilingual speech recognition, automatic turn taking, a scripted demo agent and offline speech synthesis. ' +
      'Runs with no LLM key; set a webhook URL to route turns to your backend.',
    {
      type: 'voice',
      clients,
      plugins: [
        { use: 'stt.vendor_a', options: { model_id: 'nova-3', language: 'multi' } },
        { use: 'turn_manager', options: { mode: 'automatic' } },
        { use: 'agent.llm', options: { provider: 'scripted' } },
        { use: 'tts.local', options: { voice: 'en-us' } },
      ],
    },
  ),
  template(
    'voice-agent-webhook',
    'Voice agent with your backend',
    'English low-latency speech recognition (flux); every user turn is posted to your backend, whose SSE reply ' +
      'is spoken with vendor speech synthesis.',
    {
      type: 'voice',
      clients,
      plugins: [
        { use: 'stt.vendor_a', options: { model_id: 'flux', language: 'en' } },
        { use: 'turn_manager', options: { mode: 'automatic' } },
        { use: 'agent.webhook', options: { url: 'https://example.com/api/agent' } },
        { use: 'tts.vendor_a' },
      ],
    },
  ),
  template(
    'voice-agent-openai',
    'Voice agent with an LLM',
    'Multilingual speech recognition and a built-in OpenAI-compatible LLM step (needs LLM_API_KEY), spoken with ' +
      'vendor speech synthesis.',
    {
      type: 'voice',
      clients,
      plugins: [
        { use: 'stt.vendor_a', options: { model_id: 'nova-3', language: 'multi' } },
        { use: 'turn_manager', options: { mode: 'automatic' } },
        { use: 'agent.llm', options: { provider: 'openai', model_id: 'gpt-4o-mini' } },
        { use: 'tts.vendor_a' },
      ],
    },
  ),
]

/** A deep copy of the template `id` (the default one when `id` is undefined), or undefined. */
export function findTemplate(id: string | undefined = DEFAULT_TEMPLATE_ID): AgentTemplate | undefined {
  const found = TEMPLATES.find((t) => t.id === id)
  return found === undefined ? undefined : structuredClone(found)
}
