import { z } from 'zod'
import { integerBetween, nonEmptyString, numberBetween, termList } from './rules.js'

/**
 * Options of `stt.openai_compatible`: a Whisper-family server speaking OpenAI's audio API on the operator's own
 * machines. `segments` posts each VAD segment to `/audio/transcriptions` (every such server has it); `realtime`
 * streams over the Realtime transcription WebSocket (`realtime_flavor: "vllm"` for vLLM's `/v1/realtime`).
 */
export const sttOpenAiCompatibleOptionsSchema = z
  .strictObject({
    mode: z.enum(['segments', 'realtime']).default('segments'),
    realtime_flavor: z.enum(['openai', 'vllm']).default('openai'),
    model: nonEmptyString(200).default('whisper-1'),
    /** ISO-639-1 code (`en`); absent lets the server detect the language. */
    language: z
      .string()
      .regex(/^[a-z]{2,3}$/, { error: 'must be an ISO-639-1 code such as en' })
      .optional(),
    prompt: z.string().max(2000).optional(),
    /** The agent's words, names and product terms, joined into the prompt so the model spells them right. */
    vocabulary: termList().optional(),
    temperature: numberBetween(0, 1).optional(),
    /** 8000 sends a phone call's audio as it is; 16000 resamples (what Whisper models work at internally). */
    sample_rate: z.union([z.literal(8000), z.literal(16000)]).default(16000),
    /** Ask for `stream: true` and read `transcript.text.delta` events as interim text (servers that can). */
    stream: z.boolean().default(false),
    /** Longest a segment's request may take before the turn fails (ms). */
    timeout_ms: integerBetween(500, 60_000).default(10_000),
    /** Segments longer than this are split at their quietest frame before they are sent (seconds). */
    max_segment_seconds: integerBetween(5, 600).default(30),
  })
  .prefault({})

/** Options of `stt.openai_compatible` after defaults are filled. */
export type SttOpenAiCompatibleOptions = z.output<typeof sttOpenAiCompatibleOptionsSchema>

/** Options of `tts.openai_compatible`: an OpenAI-format speech server (`POST /audio/speech`). */
export const ttsOpenAiCompatibleOptionsSchema = z
  .strictObject({
    model: nonEmptyString(200).default('tts-1'),
    voice: nonEmptyString(200).default('alloy'),
    /** `pcm` is raw 16-bit mono at `sample_rate`; `wav` carries its own header (its rate is read from it). */
    response_format: z.enum(['pcm', 'wav']).default('pcm'),
    speed: numberBetween(0.25, 4).optional(),
    /** The rate of the server's `pcm` (OpenAI and Kokoro-FastAPI: 24000). */
    sample_rate: z.union([z.literal(8000), z.literal(16000), z.literal(22050), z.literal(24000)]).default(24000),
    /** Longest a sentence's request may wait for its first byte (ms). */
    timeout_ms: integerBetween(500, 60_000).default(10_000),
  })
  .prefault({})

/** Options of `tts.openai_compatible` after defaults are filled. */
export type TtsOpenAiCompatibleOptions = z.output<typeof ttsOpenAiCompatibleOptionsSchema>

/** The transcription prompt: the agent's prompt followed by its vocabulary, or undefined when there is neither. */
export function transcriptionPrompt(options: Pick<SttOpenAiCompatibleOptions, 'prompt' | 'vocabulary'>): string | undefined {
  const words = options.vocabulary?.join(', ')
  const parts = [options.prompt?.trim(), words].filter((p): p is string => p !== undefined && p !== '')
  return parts.length === 0 ? undefined : parts.join(' ')
}
