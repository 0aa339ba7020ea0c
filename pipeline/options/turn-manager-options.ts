import { z } from 'zod'
import { DEFAULT_BACKCHANNELS } from '../turn-rules/backchannels.js'
import { integerBetween, nonEmptyString, numberBetween } from './rules.js'

/** Options of `turn_manager`: SPEC fields plus the trigger, barge-in and word-reading rules (see README). */
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
    // After a complete short answer or a complete number the turn ends this soon (never later than base_timeout_ms).
    min_timeout_ms: numberBetween(0, 5000).default(300),
    // An unfinished number, a trailing "and" or "um", an open list: the turn waits this long (never less than base).
    max_timeout_ms: numberBetween(500, 10000).default(4000),
    // Backchannel phrases per language tag: said while the agent speaks they neither interrupt nor make a turn.
    backchannels: z
      .record(
        z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, { error: 'must be a language tag such as en or en-US' }),
        z.array(nonEmptyString(40)).max(100),
      )
      .refine((r) => Object.keys(r).length <= 50, { error: 'at most 50 languages' })
      .default(() => structuredClone(DEFAULT_BACKCHANNELS) as Record<string, string[]>),
    // Whose numbering plan a phone number is checked against when the caller's own number does not say.
    default_country: z
      .string()
      .regex(/^[A-Z]{2}$/, { error: 'must be an ISO 3166-1 alpha-2 country code such as US' })
      .default('US'),
  })
  .prefault({})

/** Options of `turn_manager` after defaults are filled. */
export type TurnManagerOptions = z.output<typeof turnManagerOptionsSchema>
