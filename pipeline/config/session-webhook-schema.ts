import { z } from 'zod'
import { customHeaders } from '../options/http-headers.js'
import { distinctList, plainObject } from '../options/rules.js'
import { webhookUrl, type UrlPolicy } from '../options/webhook-url.js'

/**
 * Lifecycle webhook event types: the session's, and a warm transfer's (opt-in: not in the default list, so
 * an agent saved before them hears nothing new).
 */
export const SESSION_WEBHOOK_EVENTS = [
  'session.start',
  'session.end',
  'session.update',
  'transfer.started',
  'transfer.answered',
  'transfer.connected',
  'transfer.failed',
] as const

/** The events sent when `events` is not given. */
export const DEFAULT_SESSION_WEBHOOK_EVENTS = ['session.start', 'session.end', 'session.update'] as const

/** One of {@link SESSION_WEBHOOK_EVENTS}. */
export type SessionWebhookEvent = (typeof SESSION_WEBHOOK_EVENTS)[number]

function sessionWebhookFields(policy: UrlPolicy) {
  return {
    url: webhookUrl(policy),
    custom_headers: customHeaders(),
    custom_metadata: plainObject(),
    // An empty list is allowed: it keeps the settings but sends no lifecycle webhooks.
    events: distinctList(SESSION_WEBHOOK_EVENTS),
  }
}

/** The `session_webhook` section; `url` is required and `events` defaults to the three `session.*` events. */
export function sessionWebhookSchema(policy: UrlPolicy) {
  const fields = sessionWebhookFields(policy)
  return z.strictObject({
    url: fields.url,
    custom_headers: fields.custom_headers.optional(),
    custom_metadata: fields.custom_metadata.optional(),
    events: fields.events.default([...DEFAULT_SESSION_WEBHOOK_EVENTS]),
  })
}

/** The `session_webhook` section of a per-session override: every field optional, no defaults. */
export function sessionWebhookOverrideSchema(policy: UrlPolicy) {
  return z.strictObject(sessionWebhookFields(policy)).partial()
}

/** The `session_webhook` section after defaults are filled. */
export type SessionWebhookConfig = z.output<ReturnType<typeof sessionWebhookSchema>>
