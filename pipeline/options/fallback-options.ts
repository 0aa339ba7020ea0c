import { z } from 'zod'
import { integerBetween, nonEmptyString } from './rules.js'

/** Defaults of what the caller hears when the agent's backend fails (see the README: no caller left in silence). */
export const FALLBACK_DEFAULTS = {
  /** End of the caller's turn -> the reply's first speakable text; past it the turn fails with cause `timeout`. */
  reply_timeout_ms: 2500,
  messages: ["I'm sorry, I'm having trouble answering right now. Could you say that again?"],
  max_consecutive_failures: 3,
  on_max_failures: 'continue',
  farewell_message: "I'm sorry, I can't help you right now. Please call again later. Goodbye.",
  transfer_message: 'Let me transfer you to a colleague.',
  holding_after_ms: 1500,
  holding_messages: ['One moment.'],
} as const

/** What happens when `max_consecutive_failures` turns in a row have failed. */
export const ON_MAX_FAILURES = ['continue', 'transfer', 'hangup'] as const

// An E.164 number or a sip: URI; the session checks the target again when it transfers.
const TRANSFER_TARGET = /^(\+[1-9]\d{6,14}|sips?:[^\s@]+@[^\s]+)$/

const phraseList = (defaults: readonly string[]) =>
  z
    .array(nonEmptyString(300))
    .min(1)
    .max(10)
    .default([...defaults])

/** `agent.webhook.fallback`: spoken instead of a reply that failed, and what to do when failures repeat. */
export const fallbackOptionsSchema = z
  .strictObject({
    /** Spoken in turn, one per failed turn. */
    messages: phraseList(FALLBACK_DEFAULTS.messages),
    max_consecutive_failures: integerBetween(1, 20).default(FALLBACK_DEFAULTS.max_consecutive_failures),
    on_max_failures: z.enum(ON_MAX_FAILURES).default(FALLBACK_DEFAULTS.on_max_failures),
    /** Spoken before hanging up (`on_max_failures: hangup`). */
    farewell_message: nonEmptyString(300).default(FALLBACK_DEFAULTS.farewell_message),
    /** Spoken before transferring (`on_max_failures: transfer`). */
    transfer_message: nonEmptyString(300).default(FALLBACK_DEFAULTS.transfer_message),
    transfer_to: z.string().regex(TRANSFER_TARGET, { error: 'must be an E.164 phone number (+14155550100) or a sip: URI' }).optional(),
  })
  .superRefine((options, ctx) => {
    if (options.on_max_failures === 'transfer' && options.transfer_to === undefined) {
      ctx.addIssue({ code: 'custom', path: ['transfer_to'], message: 'is required when on_max_failures is "transfer"' })
    }
  })
  .prefault({})

/** `agent.webhook.holding`: a short phrase while a slow backend has not said anything yet; off by default. */
export const holdingOptionsSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** End of the caller's turn -> the holding phrase, when no speakable text has arrived by then. */
    after_ms: integerBetween(300, 10000).default(FALLBACK_DEFAULTS.holding_after_ms),
    messages: phraseList(FALLBACK_DEFAULTS.holding_messages),
  })
  .prefault({})

/** `fallback` after defaults are filled. */
export type FallbackOptions = z.output<typeof fallbackOptionsSchema>

/** `holding` after defaults are filled. */
export type HoldingOptions = z.output<typeof holdingOptionsSchema>
