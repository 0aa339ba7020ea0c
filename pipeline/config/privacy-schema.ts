import { z } from 'zod'
import { integerBetween } from '../options/rules.js'

/** Retention of a session's recording in days: at least one, at most ten years. */
const retentionDays = integerBetween(1, 3650)

/** How much of a session's transcript is stored: as said, with sensitive spans replaced, or nothing. */
export const TRANSCRIPT_LEVELS = ['redacted', 'full', 'none'] as const

const redactSwitches = z.strictObject({
  cards: z.boolean().default(true),
  ssn: z.boolean().default(true),
  iban: z.boolean().default(false),
  email: z.boolean().default(false),
  phone: z.boolean().default(false),
})

/**
 * The agent's `privacy` block: which kinds are redacted (cards and SSNs by default), whether the
 * agent's own webhook gets redacted text (off: the backend may have to take the payment), and how transcripts
 * are stored, whether its sessions are recorded (the organization's switch must be on too) and how long its
 * recordings are kept. Absent stays absent in the stored config; {@link resolvePrivacy} gives the defaults.
 */
export const privacySchema = z.strictObject({
  redact: redactSwitches.prefault({}),
  redact_webhooks: z.boolean().default(false),
  transcripts: z.enum(TRANSCRIPT_LEVELS).default('redacted'),
  recordings: z.boolean().default(true),
  retention_days: retentionDays.optional(),
})

/** The `privacy` block of a per-session override: partial, no defaults, so it never resets the agent's values. */
export const privacyOverrideSchema = z.strictObject({
  // Spelled out: zod 4 still applies an inner default under .partial(), which would reset the agent's switches.
  redact: z
    .strictObject({
      cards: z.boolean().optional(),
      ssn: z.boolean().optional(),
      iban: z.boolean().optional(),
      email: z.boolean().optional(),
      phone: z.boolean().optional(),
    })
    .optional(),
  redact_webhooks: z.boolean().optional(),
  transcripts: z.enum(TRANSCRIPT_LEVELS).optional(),
  recordings: z.boolean().optional(),
  retention_days: retentionDays.optional(),
})

/** The privacy settings with every default filled. */
export type PrivacyConfig = z.output<typeof privacySchema>

/** The privacy settings of a config, defaults filled when the block is absent. */
export function resolvePrivacy(privacy: PrivacyConfig | undefined): PrivacyConfig {
  return privacy ?? privacySchema.parse({})
}
