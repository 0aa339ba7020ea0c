import { z } from 'zod'
import { pluginsSchema, pluginStage } from './plugins-schema.js'
import { privacyOverrideSchema, privacySchema } from './privacy-schema.js'
import { numberBetween, plainObject, toggle } from '../options/rules.js'
import { sessionWebhookOverrideSchema, sessionWebhookSchema } from './session-webhook-schema.js'
import { transferSchema } from './transfer-schema.js'
import { vadOverrideSchema, vadSchema } from './vad-schema.js'
import type { UrlPolicy } from '../options/webhook-url.js'

const clientsSchema = z.strictObject({
  browser: toggle().default(true),
  carrier: toggle().default(false),
})

const clientsOverrideSchema = z.strictObject({
  browser: toggle().optional(),
  carrier: toggle().optional(),
})

const sessionDuration = numberBetween(1, 1440)

/** What an answering machine is told after its beep on an outbound call with machine detection. */
const voicemailMessage = z.string().trim().min(1).max(1000)

/** The agent `config` (pipeline configuration), built per URL policy. */
export function pipelineConfigSchema(policy: UrlPolicy) {
  return z
    .strictObject({
      type: z.literal('voice').optional(),
      clients: clientsSchema,
      plugins: pluginsSchema(policy),
      metadata: plainObject().optional(),
      session_webhook: sessionWebhookSchema(policy).optional(),
      session_duration_timeout_minutes: sessionDuration.default(30),
      vad: vadSchema,
      privacy: privacySchema.optional(),
      // An addition: said by the gateway itself after an answering machine's beep, then the call hangs up.
      voicemail_message: voicemailMessage.optional(),
      transfer: transferSchema(policy).optional(),
    })
    .superRefine((config, ctx) => {
      if (!config.clients.carrier) return
      // A phone caller can neither type nor read, nor press a push-to-talk button.
      const stages = config.plugins.map((p) => pluginStage(p.use))
      for (const [stage, article] of [
        ['stt', 'an'],
        ['tts', 'a'],
      ] as const) {
        if (stages.includes(stage)) continue
        const message = `must include ${article} ${stage}.* plugin when clients.carrier is enabled`
        ctx.addIssue({ code: 'custom', path: ['plugins'], message })
      }
      config.plugins.forEach((plugin, index) => {
        if (plugin.use === 'turn_manager' && plugin.options.trigger === 'push_to_talk') {
          ctx.addIssue({
            code: 'custom',
            path: ['plugins', index, 'options', 'trigger'],
            message: 'cannot be push_to_talk when clients.carrier is enabled',
          })
        }
      })
    })
}

/**
 * A per-session override: any subset of the root fields. Objects are partial and carry no defaults, so
 * merging them never resets the agent's values; `plugins`, when given, is a complete list.
 */
export function configOverrideSchema(policy: UrlPolicy) {
  return z.strictObject({
    type: z.literal('voice').optional(),
    clients: clientsOverrideSchema.optional(),
    plugins: pluginsSchema(policy).optional(),
    metadata: plainObject().optional(),
    session_webhook: sessionWebhookOverrideSchema(policy).optional(),
    session_duration_timeout_minutes: sessionDuration.optional(),
    vad: vadOverrideSchema.optional(),
    privacy: privacyOverrideSchema.optional(),
    voicemail_message: voicemailMessage.optional(),
    transfer: transferSchema(policy).optional(),
  })
}

/** A validated pipeline configuration with every default filled. */
export type PipelineConfig = z.output<ReturnType<typeof pipelineConfigSchema>>

/** A validated per-session override (toggles normalised to booleans, plugin defaults filled). */
export type ConfigOverride = z.output<ReturnType<typeof configOverrideSchema>>
