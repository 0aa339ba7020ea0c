/** How campaigns, contacts and attempts look in the API's answers, and the create body's schema. */
import { z } from 'zod'
import { DAY_NAMES, formatClockTime, parseClockTime } from '../../core/calling-window.js'
import type { CampaignAttemptRow, CampaignContactRow, CampaignRow, RetryPolicy } from '../../gateway/store/campaign-schema.js'

const rule = z.strictObject({
  max_attempts: z.number().int().min(1).max(20),
  delay_seconds: z
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 3600),
})
const clock = z
  .string()
  .refine((v) => parseClockTime(v) !== undefined, 'a local time as HH:MM (00:00 to 24:00)')
  .transform((v) => parseClockTime(v) as number)

/** The retry policy a campaign gets for the outcomes its body leaves out. */
export const DEFAULT_RETRY: RetryPolicy = {
  busy: { max_attempts: 3, delay_seconds: 600 },
  no_answer: { max_attempts: 3, delay_seconds: 3600 },
  failed: { max_attempts: 2, delay_seconds: 300 },
  machine: { max_attempts: 1, delay_seconds: 0 },
}

/** Body of POST /v1/campaigns (also the API reference's schema). */
export const createCampaignSchema = z.strictObject({
  name: z.string().min(1).max(200),
  agent_id: z.string().min(1).max(100),
  from_phone_number: z.string().min(1).max(64),
  calling_window: z
    .strictObject({
      days: z.array(z.enum(DAY_NAMES)).min(1).max(7),
      start: clock,
      end: clock,
    })
    .refine((w) => w.start < w.end, { message: 'start must be before end (a window does not span midnight)', path: ['end'] }),
  default_timezone: z.string().min(1).max(64),
  retry: z
    .strictObject({ busy: rule.optional(), no_answer: rule.optional(), failed: rule.optional(), machine: rule.optional() })
    .optional(),
  max_concurrency: z.number().int().min(1).max(1000),
  machine_detection: z.boolean().optional(),
  lifecycle_webhooks: z.boolean().optional(),
})

/** A campaign as the API shows it. */
export function campaignView(c: CampaignRow) {
  return {
    id: c.id,
    name: c.name,
    agent_id: c.agent_id,
    from_phone_number: c.from_phone_number,
    status: c.status,
    calling_window: {
      days: [...c.window_days].sort().map((d) => DAY_NAMES[d - 1]),
      start: formatClockTime(c.window_start_minute),
      end: formatClockTime(c.window_end_minute),
    },
    default_timezone: c.default_timezone,
    retry: c.retry,
    max_concurrency: c.max_concurrency,
    machine_detection: c.machine_detection,
    lifecycle_webhooks: c.lifecycle_webhooks,
    created_at: c.created_at.toISOString(),
    started_at: c.started_at?.toISOString() ?? null,
    ended_at: c.ended_at?.toISOString() ?? null,
  }
}

/** An attempt as the API shows it. */
export function attemptView(a: CampaignAttemptRow) {
  return {
    attempt: a.attempt,
    session_id: a.session_id,
    outcome: a.outcome,
    call_status: a.call_status,
    end_reason: a.end_reason,
    answered_by: a.answered_by,
    started_at: a.started_at.toISOString(),
    ended_at: a.ended_at.toISOString(),
  }
}

/** A contact with its attempts, as the API shows it. */
export function contactView(c: CampaignContactRow, attempts: CampaignAttemptRow[]) {
  return {
    id: c.id,
    row: c.row_number,
    phone_number: c.phone_number,
    timezone: c.timezone,
    custom_metadata: c.custom_metadata,
    status: c.status,
    disposition: c.disposition,
    attempts: c.attempts,
    last_outcome: c.last_outcome,
    next_attempt_at: c.status === 'pending' ? c.next_attempt_at.toISOString() : null,
    history: attempts.map(attemptView),
  }
}
