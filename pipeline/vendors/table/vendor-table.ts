import { createLlmAgentStep } from '../../agent/create-agent-step.js'
import { agentLlmOptionsSchema } from '../../options/agent-options.js'
import { sttVendorAOptionsSchema, sttVendorBOptionsSchema } from '../../options/stt-options.js'
import { sttOpenAiCompatibleOptionsSchema, ttsOpenAiCompatibleOptionsSchema } from '../../options/openai-compatible-options.js'
import { ttsVendorAOptionsSchema } from '../../options/tts-options.js'
import { createOpenAiCompatibleSttStream } from '../stt/openai-compatible-stt.js'
import { createVendorASttStream } from '../stt/vendor-a-stt.js'
import { createVendorBSttStream } from '../stt/vendor-b-stt.js'
import { createOpenAiSpeechTtsStream } from '../tts/openai-speech-tts.js'
import { createVendorATtsStream } from '../tts/vendor-a-tts.js'
import type { LlmVendorRow, SttVendorRow, TtsVendorRow } from './vendor-row.js'

const WS = ['ws', 'wss'] as const
const HTTP = ['http', 'https'] as const

/**
 * Every outside vendor, keyed by the plugin id an agent configuration selects it with. The gateway reads each
 * row's environment variables at start-up and the session opens a call's streams through the row's factory, so a
 * new vendor is its adapter file plus a row here: the agent configuration's plugin list is built from the rows too
 * (config/plugins-schema.ts).
 * The order is the order the environment is checked in: the first bad variable is the one reported.
 */
export const VENDOR_TABLE = [
  {
    id: 'stt.vendor_a',
    kind: 'stt',
    env: { url: 'STT_VENDOR_A_URL', key: 'STT_VENDOR_A_API_KEY', defaultUrl: 'wss://api.deepgram.com', schemes: WS },
    options: sttVendorAOptionsSchema,
    create: createVendorASttStream,
  } satisfies SttVendorRow<'stt.vendor_a', typeof sttVendorAOptionsSchema>,
  {
    id: 'stt.vendor_b',
    kind: 'stt',
    env: { url: 'STT_VENDOR_B_URL', key: 'STT_VENDOR_B_API_KEY', defaultUrl: 'wss://streaming.assemblyai.com', schemes: WS },
    options: sttVendorBOptionsSchema,
    create: createVendorBSttStream,
  } satisfies SttVendorRow<'stt.vendor_b', typeof sttVendorBOptionsSchema>,
  {
    id: 'stt.openai_compatible',
    kind: 'stt',
    env: {
      url: 'STT_OPENAI_COMPATIBLE_URL',
      key: 'STT_OPENAI_COMPATIBLE_API_KEY',
      defaultUrl: 'http://localhost:8000/v1',
      schemes: HTTP,
      keyless: true,
    },
    options: sttOpenAiCompatibleOptionsSchema,
    create: createOpenAiCompatibleSttStream,
  } satisfies SttVendorRow<'stt.openai_compatible', typeof sttOpenAiCompatibleOptionsSchema>,
  {
    id: 'tts.vendor_a',
    kind: 'tts',
    env: { url: 'TTS_VENDOR_A_URL', key: 'TTS_VENDOR_A_API_KEY', defaultUrl: 'wss://api.elevenlabs.io', schemes: WS },
    options: ttsVendorAOptionsSchema,
    create: createVendorATtsStream,
  } satisfies TtsVendorRow<'tts.vendor_a', typeof ttsVendorAOptionsSchema>,
  {
    id: 'tts.openai_compatible',
    kind: 'tts',
    env: {
      url: 'TTS_OPENAI_COMPATIBLE_URL',
      key: 'TTS_OPENAI_COMPATIBLE_API_KEY',
      defaultUrl: 'http://localhost:8880/v1',
      schemes: HTTP,
      keyless: true,
    },
    options: ttsOpenAiCompatibleOptionsSchema,
    create: createOpenAiSpeechTtsStream,
  } satisfies TtsVendorRow<'tts.openai_compatible', typeof ttsOpenAiCompatibleOptionsSchema>,
  {
    id: 'agent.llm',
    kind: 'llm',
    env: { url: 'LLM_BASE_URL', key: 'LLM_API_KEY', defaultUrl: 'https://api.openai.com/v1', schemes: HTTP },
    options: agentLlmOptionsSchema,
    create: createLlmAgentStep,
  } satisfies LlmVendorRow<'agent.llm', typeof agentLlmOptionsSchema>,
] as const

/** The plugin id of a vendor in {@link VENDOR_TABLE}. */
export type VendorId = (typeof VENDOR_TABLE)[number]['id']
