import type { Log } from '../core/log.js'
import { ttsLocalOptionsSchema, sharedEspeakEngine, sharedSileroModel } from '../pipeline/index.js'

/** What warming up took, for the start-up log line. */
export interface WarmUpResult {
  vadMs: number | undefined
  localTtsMs: number | undefined
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/**
 * Loads what the first call needs but answering HTTP does not: the Silero VAD model (onnxruntime-node's native
 * library) and the offline espeak-ng TTS engine, which the default agent template speaks with. Loaded on first
 * use instead, espeak-ng made the first welcome's audio seconds late. Called right after the server listens, so
 * it never delays readiness; a failure is logged and left to the first call to report (a missing optional
 * espeak-ng package is normal: `tts.local` then answers text only).
 */
export async function warmUpSpeech(log: Log): Promise<WarmUpResult> {
  // Let requests already waiting (a readiness probe) through first: parts of both loads hold the event loop.
  await nextTurn()
  const started = performance.now()
  const vad = sharedSileroModel()
    .load()
    .then(
      () => performance.now() - started,
      (error: unknown) => {
        log.warn({ err: error }, 'could not preload the VAD model; the first call will try again')
        return undefined
      },
    )
  const tts = sharedEspeakEngine().then(
    async (engine) => {
      // espeak-ng is asm.js: its first sentences run several times slower until the JIT has compiled them, and a
      // voice is loaded on first use. One short sentence in the default voice, a turn after the load, does both.
      await nextTurn()
      const defaults = ttsLocalOptionsSchema.parse({})
      try {
        engine.synthesize('Ready.', { voice: defaults.voice, rate: defaults.rate })
      } catch (error) {
        log.warn({ err: error }, 'offline TTS (tts.local) loaded but could not speak')
      }
      return performance.now() - started
    },
    (error: unknown) => {
      log.info({ reason: error instanceof Error ? error.message : String(error) }, 'offline TTS (tts.local) not preloaded')
      return undefined
    },
  )
  const result = { vadMs: await vad, localTtsMs: await tts }
  const ms = (v: number | undefined) => (v === undefined ? undefined : Math.round(v))
  // vad_folded_convs: the VAD's convolutions running as one matrix product per model call (12 for the shipped
  // model; 0 means the file runs as shipped, at about twice the CPU a frame under load).
  log.info(
    { vad_ms: ms(result.vadMs), vad_folded_convs: sharedSileroModel().foldedConvs, tts_local_ms: ms(result.localTtsMs) },
    'speech models loaded',
  )
  return result
}
