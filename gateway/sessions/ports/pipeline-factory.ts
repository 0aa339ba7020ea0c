import {
  redact,
  openAgentStep,
  openSessionStt,
  openSessionTts,
  type VendorSettings,
  type PipelineConfig,
  type FetchLike,
  VoicePipeline,
  type HistoryItem,
  type InputAudioFormat,
  type OutputAudioFormat,
  type PipelineEvent,
  type PipelineHooks,
  type VadFactory,
} from '../../../pipeline/index.js'
import type { Kysely } from 'kysely'
import type { Database, SessionRow } from '../../store/schema.js'
import type { Log } from '../../../core/log.js'
import { conversationHistory } from '../../store/sessions.js'

/** Outside services a pipeline may use, keyed by plugin id; ids absent mean "not configured". */
export type VendorEndpoints = VendorSettings

/** Longest conversation history handed to an agent step when a conversation resumes. */
const MAX_HISTORY_ITEMS = 200

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
  /** Whether an `agent.webhook` URL reached a private address (the egress policy knows). */
  webhookPrivateTarget?: ((url: string) => boolean) | undefined
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
  const agent = openAgentStep(agentPlugin, input.vendors, {
    webhookSecret: input.webhookSecret,
    sessionHeaders: config.session_webhook?.custom_headers,
    logger: log,
    webhookFetch: input.webhookFetch,
    webhookPrivateTarget: input.webhookPrivateTarget,
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
    stt: input.audio ? openSessionStt(config, input.vendors, { format: input.audio.input, signal, logger: log }) : undefined,
    tts: input.audio ? openSessionTts(config, input.vendors, { outputFormat: input.audio.output, signal, logger: log }) : undefined,
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
