import { z } from 'zod'
import { webhookUrl, type UrlPolicy } from '../options/webhook-url.js'

/**
 * The `transfer` section: how the agent's warm transfers sound. `hold_audio_url`: a WAV or MP3 file played to a
 * caller on hold (looped) instead of the built-in hold audio; fetched by the gateway under the same rules as the
 * agent's webhooks (https, the egress policy).
 */
export function transferSchema(policy: UrlPolicy) {
  return z.strictObject({ hold_audio_url: webhookUrl(policy).optional() })
}

/** The `transfer` section after validation. */
export type TransferConfig = z.output<ReturnType<typeof transferSchema>>
