import { z } from 'zod'
import { integerBetween, nonEmptyString, numberBetween } from './rules.js'

/** Options of `tts.vendor_a` (multi-context streaming TTS). */
export const ttsVendorAOptionsSchema = z
  .strictObject({
    model_id: nonEmptyString(100).default('eleven_flash_v2_5'),
    // The voice id is a URL path segment, so it is restricted to what the vendor issues.
    voice_id: z
      .string()
      .regex(/^[A-Za-z0-9]{1,64}$/, { error: 'must be 1 to 64 letters or digits' })
      .default('21m00Tcm4TlvDq8EDWM6'),
    speed: numberBetween(0.7, 1.2).optional(),
  })
  .prefault({})

/** Options of `tts.vendor_a` after defaults are filled. */
export type TtsVendorAOptions = z.output<typeof ttsVendorAOptionsSchema>

/** Options of `tts.local` (offline espeak-ng); the voice is matched case-insensitively and stored lower-case. */
export const ttsLocalOptionsSchema = z
  .strictObject({
    voice: z
      .string()
      .max(64)
      .regex(/^[a-z]{2,3}(-[a-z0-9]+)*$/i, { error: 'must be a language code such as en-us' })
      .transform((voice) => voice.toLowerCase())
      .default('en-us'),
    rate: integerBetween(80, 450).default(175),
  })
  .prefault({})

/** Options of `tts.local` after defaults are filled. */
export type TtsLocalOptions = z.output<typeof ttsLocalOptionsSchema>
