import type { PipelineConfig } from './schema.js'
import { DEFAULT_VAD_FRAME_SAMPLES } from './vad-schema.js'

/** The `config` the authorize response gives browsers: turn trigger and VAD settings. */
export interface FrontendConfig {
  /** How the browser starts and ends user turns. */
  transcription: {
    trigger: 'automatic' | 'push_to_talk'
    can_interrupt: boolean
    automatic: boolean
  }
  /** Settings for the browser's own VAD. */
  vad: {
    enabled: boolean
    gate_audio: boolean
    buffer_frames: number
    model: 'v5'
    positive_speech_threshold?: number
    negative_speech_threshold?: number
    redemption_frames?: number
    min_speech_frames?: number
    pre_speech_pad_frames?: number
    frame_samples: number
  }
}

const OPTIONAL_VAD_FIELDS = [
  'positive_speech_threshold',
  'negative_speech_threshold',
  'redemption_frames',
  'min_speech_frames',
  'pre_speech_pad_frames',
] as const

/** Projects a validated config onto the browser-facing settings of the authorize response. */
export function frontendConfig(config: PipelineConfig): FrontendConfig {
  const turnManager = config.plugins.find((p) => p.use === 'turn_manager')
  const trigger = turnManager?.options.trigger ?? 'automatic'
  const vad: FrontendConfig['vad'] = {
    enabled: config.vad.enabled,
    gate_audio: config.vad.gate_audio,
    buffer_frames: config.vad.buffer_frames,
    model: config.vad.model,
    frame_samples: config.vad.frame_samples ?? DEFAULT_VAD_FRAME_SAMPLES,
  }
  for (const field of OPTIONAL_VAD_FIELDS) {
    const value = config.vad[field]
    if (value !== undefined) vad[field] = value
  }
  return {
    transcription: {
      trigger,
      can_interrupt: turnManager?.options.allow_interruptions ?? true,
      automatic: trigger === 'automatic',
    },
    vad,
  }
}
