import { z } from 'zod'
import { integerBetween, numberBetween } from './rules.js'

/** Options of `turn_manager`: SPEC fields plus the trigger and barge-in rules (see README). */
export const turnManagerOptionsSchema = z
  .strictObject({
    mode: z.literal('automatic').default('automatic'),
    base_timeout_ms: numberBetween(500, 5000).default(2000),
    // null and absent both mean "never end the session for user silence".
    user_silence_timeout_minutes: numberBetween(1, 60).nullable().default(null),
    disable_interruptions_during_welcome: z.boolean().default(false),
    trigger: z.enum(['automatic', 'push_to_talk']).default('automatic'),
    allow_interruptions: z.boolean().default(true),
    // Caller speech must last this long before it cuts the agent off (a cough or "mm-hm" does not).
    min_interruption_ms: numberBetween(0, 3000).default(400),
    // When > 0, a barge-in also needs this many transcribed words.
    min_interruption_words: integerBetween(0, 10).default(0),
  })
  .prefault({})

/** Options of `turn_manager` after defaults are filled. */
export type TurnManagerOptions = z.output<typeof turnManagerOptionsSchema>
