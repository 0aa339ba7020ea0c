import {
  redact,
  type VendorSetting,
  type PipelineConfig,
  createAgentStep,
  createSttStream,
  type SttStream,
  createTtsStream,
  createLocalTtsStream,
  type TtsStream,
  type FetchLike,
  VoicePipeline,
  type HistoryItem,
  type InputAudioFormat,
  type OutputAudioFormat,
  type PipelineEvent,
  type PipelineHooks,
  type VadFactory,
} from '../../pipeline/index.js'
import type { Kysely } from 'kysely'
import type { Database, SessionRow } from '../store/schema.js'
import type { Log } from '../../core/log.js'
import { conversationHistory } from '../store/sessions.js'

/** Outside services a pipeline may use; keys absent mean "not configured". */
export interface VendorEndpoints {
  sttVendorA: VendorSetting
  sttVendorB: VendorSetting
  ttsVendorA: VendorSetting
  llm: VendorSetting
}

/** Longest conversation history handed to an agent step when a conversation resumes. */
const MAX_HISTORY_ITEMS = 200

function sttFor(
  config: PipelineConfig,
  vendors: VendorEndpoints,
  input: InputAudioFormat,
  signal: AbortSignal,
  log: Log,
): SttStream | undefined {
  const plugin = config.plugins.find((p) => p.use === 'stt.vendor_a' || p.use === 'stt.vendor_b')
  if (plugin === undefined || (plugin.use !== 'stt.vendor_a' && plugin.use !== 'stt.vendor_b')) return undefined
  const endpoint = plugin.use === 'stt.vendor_a' ? vendors.sttVendorA : vendors.sttVendorB
  if (endpoint.apiKey === undefined) return undefined
  return createSttStream(plugin, {
    format: input,
    endpoint: { url: endpoint.url, apiKey: endpoint.apiKey },
    signal,
    logger: log,
  })
}

function ttsFor(
  config: PipelineConfig,
  vendors: VendorEndpoints,
  output: OutputAudioFormat,
  signal: AbortSignal,
  log: Log,
): TtsStream | undefined {
  const plugin = config.plugins.find((p) => p.use === 'tts.vendor_a' || p.use === 'tts.local')
  if (plugin?.use === 'tts.local') return createLocalTtsStream(plugin.options, { outputFormat: output, signal, logger: log })
  if (plugin?.use !== 'tts.vendor_a') return undefined
  if (vendors.ttsVendorA.apiKey === undefined) {
    // An agent saved with a vendor voice still speaks on a machine without the vendor key.
    log.warn({}, 'tts.vendor_a has no API key configured (TTS_VENDOR_A_API_KEY): speaking with tts.local instead')
    return createLocalTtsStream({ voice: 'en-us', rate: 175 }, { outputFormat: output, signal, logger: log })
  }
  return createTtsStream(plugin, {
    outputFormat: output,
    endpoint: { url: vendors.ttsVendorA.url, apiKey: vendors.ttsVendorA.apiKey },
    signal,
    logger: log,
  })
}

/** Builds and starts the voice pipeline of one session. */
export async function startPipeline(input: {
  db: Kysely<Database>
  row: SessionRow
  config: PipelineConfig
  webhookSecret: string
  /** The id the welcome turn takes (the session's lifecycle `session.start` already named it). */
  welcomeTurnId: string
  audio: { input: InputAudioFormat; output: OutputAudioFormat } | undefined
  vendors: VendorEndpoints
  createVad?: VadFactory | undefined
  /** The fetch `agent.webhook` requests go through (the egress policy). */
  webhookFetch?: FetchLike | undefined
  log: Log
  signal: AbortSignal
  emit: (e: PipelineEvent) => void
  hooks: PipelineHooks
}): Promise<VoicePipeline> {
  const { row, config, log, signal } = input
  const agentPlugin = config.plugins.find((p) => p.use === 'agent.llm' || p.use === 'agent.webhook')
  if (agentPlugin === undefined || (agentPlugin.use !== 'agent.llm' && agentPlugin.use !== 'agent.webhook')) {
    throw new Error('pipeline config has no agent step')
  }
  const history: HistoryItem[] = []
  for (const t of await conversationHistory(input.db, row.conversation_id, MAX_HISTORY_ITEMS)) {
    if (t.user_message !== null) history.push({ role: 'user', text: t.user_message })
    if (t.assistant_message !== null) history.push({ role: 'assistant', text: t.assistant_message })
  }
  const agent = createAgentStep(agentPlugin, {
    webhookSecret: input.webhookSecret,
    sessionHeaders: config.session_webhook?.custom_headers,
    llm: { baseUrl: input.vendors.llm.url, apiKey: input.vendors.llm.apiKey },
    logger: log,
    webhookFetch: input.webhookFetch,
  })
  const pipeline = new VoicePipeline({
    config,
    audio: input.audio,
    context: {
      sessionId: row.id,
      conversationId: row.conversation_id,
      agentId: row.agent_id,
      startedAt: row.started_at?.toISOString(),
      fromPhoneNumber: row.from_phone_number ?? undefined,
      toPhoneNumber: row.to_phone_number ?? undefined,
      // The SPEC's two names: session_webhook's custom_metadata, and the session's (authorization) metadata.
      customMetadata: config.session_webhook?.custom_metadata,
      metadata: (row.metadata as Record<string, unknown> | null) ?? {},
      history,
      redactWebhookText: webhookRedaction(config),
    },
    agent,
    welcomeTurnId: input.welcomeTurnId,
    stt: input.audio ? sttFor(config, input.vendors, input.audio.input, signal, log) : undefined,
    tts: input.audio ? ttsFor(config, input.vendors, input.audio.output, signal, log) : undefined,
    createVad: input.createVad,
    emit: input.emit,
    hooks: input.hooks,
    logger: log,
    signal,
  })
  pipeline.start()
  return pipeline
}

/** The redaction of the agent webhook's `text` when the agent's `privacy.redact_webhooks` asks for it. */
export function webhookRedaction(config: PipelineConfig): ((text: string) => string) | undefined {
  const privacy = config.privacy
  if (privacy?.redact_webhooks !== true) return undefined
  return (text) => redact(text, { redact: privacy.redact }).text
}
