/**
 * One utterance in the agent's voice, outside the pipeline's turns: the warm transfer's hold line (to the
 * caller) and whisper (to the human only). A TTS stream of its own, opened from the agent's configuration, speaks
 * the text once and closes; the audio comes back whole, in mu-law 8 kHz (a phone leg's format) or the format asked
 * for (a browser caller's PCM16 16 kHz).
 */
import { AUDIO_FORMATS, openSessionTts, type OutputAudioFormat, type PipelineConfig } from '../../pipeline/index.js'
import type { Log } from '../../core/log.js'
import type { VendorEndpoints } from '../sessions/ports/pipeline-factory.js'

/** Longest utterance kept: 2 minutes (a whisper is at most 1,000 characters). */
export const MAX_UTTERANCE_MS = 120_000

/**
 * Speaks `text` with the agent's TTS; rejects when the configuration has no TTS or the vendor failed. `onAudio` gets
 * each piece as it comes (so it can be played before the rest is synthesized); the whole is returned at the end.
 */
export async function speakOnce(
  text: string,
  deps: {
    config: PipelineConfig
    vendors: VendorEndpoints
    log: Log
    signal: AbortSignal
    onAudio?: (audio: Buffer) => void
    /** mu-law 8 kHz unless said. */
    outputFormat?: OutputAudioFormat
  },
): Promise<Buffer> {
  const outputFormat = deps.outputFormat ?? 'ulaw_8000'
  const info = AUDIO_FORMATS[outputFormat]
  const maxBytes = (info.sampleRate * info.bytesPerSample * MAX_UTTERANCE_MS) / 1000
  const tts = openSessionTts(deps.config, deps.vendors, { outputFormat, signal: deps.signal, logger: deps.log })
  if (tts === undefined) throw new Error('the agent has no text-to-speech step')
  const contextId = 'transfer'
  const chunks: Buffer[] = []
  let bytes = 0
  try {
    tts.pushText(contextId, text)
    tts.flush(contextId)
    for await (const event of tts) {
      if (deps.signal.aborted) break
      if (event.type === 'audio' && event.contextId === contextId && bytes < maxBytes) {
        chunks.push(event.audio)
        bytes += event.audio.length
        deps.onAudio?.(event.audio)
      } else if (event.type === 'done' && event.contextId === contextId) break
      else if (event.type === 'error' && (event.contextId === undefined || event.contextId === contextId)) {
        throw new Error(`text-to-speech failed: ${event.message}`)
      }
    }
  } finally {
    void tts.close().catch(() => undefined)
  }
  if (deps.signal.aborted) throw deps.signal.reason
  return Buffer.concat(chunks).subarray(0, maxBytes)
}
