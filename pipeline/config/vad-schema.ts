import { z } from 'zod'
import { integerBetween, numberBetween } from '../options/rules.js'

/** Silero v5 window sizes (samples at 16 kHz) the VAD accepts; 512 (32 ms) is the model's native window. */
export const VAD_FRAME_SAMPLES = [512] as const

/** Frame size reported to browsers when the config leaves `vad.frame_samples` unset. */
export const DEFAULT_VAD_FRAME_SAMPLES = 512

const frameSamples = z.number().refine((n) => (VAD_FRAME_SAMPLES as readonly number[]).includes(n), {
  error: `must be ${VAD_FRAME_SAMPLES.join(' or ')}`,
})

// Each field once, without defaults: the override form must not inject defaults over the agent's values.
const vadFields = {
  enabled: z.boolean(),
  gate_audio: z.boolean(),
  buffer_frames: integerBetween(0, 20),
  model: z.literal('v5'),
  positive_speech_threshold: numberBetween(0, 1),
  negative_speech_threshold: numberBetween(0, 1),
  redemption_frames: integerBetween(0, 10),
  min_speech_frames: integerBetween(0, 10),
  pre_speech_pad_frames: integerBetween(0, 10),
  frame_samples: frameSamples,
}

function checkThresholds(
  vad: { positive_speech_threshold?: number | undefined; negative_speech_threshold?: number | undefined },
  ctx: z.RefinementCtx,
): void {
  const { positive_speech_threshold: positive, negative_speech_threshold: negative } = vad
  if (positive !== undefined && negative !== undefined && negative > positive) {
    ctx.addIssue({
      code: 'custom',
      path: ['negative_speech_threshold'],
      message: 'must be less than or equal to positive_speech_threshold',
    })
  }
}

/** The `vad` section with its defaults; thresholds and frame counts stay absent unless set. */
export const vadSchema = z
  .strictObject({
    enabled: vadFields.enabled.default(true),
    gate_audio: vadFields.gate_audio.default(true),
    buffer_frames: vadFields.buffer_frames.default(10),
    model: vadFields.model.default('v5'),
    positive_speech_threshold: vadFields.positive_speech_threshold.optional(),
    negative_speech_threshold: vadFields.negative_speech_threshold.optional(),
    redemption_frames: vadFields.redemption_frames.optional(),
    min_speech_frames: vadFields.min_speech_frames.optional(),
    pre_speech_pad_frames: vadFields.pre_speech_pad_frames.optional(),
    frame_samples: vadFields.frame_samples.optional(),
  })
  .superRefine(checkThresholds)
  .prefault({})

/** The `vad` section after defaults are filled. */
export type VadConfig = z.output<typeof vadSchema>

/** The `vad` section of a per-session override: every field optional, no defaults. */
export const vadOverrideSchema = z.strictObject(vadFields).partial().superRefine(checkThresholds)
