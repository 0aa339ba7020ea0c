import { z } from 'zod'
import { agentLlmOptionsSchema, agentWebhookOptionsSchema } from './agent-options.js'
import { sttVendorAOptionsSchema, sttVendorBOptionsSchema } from './stt-options.js'
import { ttsLocalOptionsSchema, ttsVendorAOptionsSchema } from './tts-options.js'
import { turnManagerOptionsSchema } from './turn-manager-options.js'
import type { UrlPolicy } from './webhook-url.js'

/** Every plugin name, in pipeline order. */
export const PLUGIN_USES = [
  'stt.vendor_a',
  'stt.vendor_b',
  'turn_manager',
  'agent.llm',
  'agent.webhook',
  'tts.vendor_a',
  'tts.local',
] as const

/** One of {@link PLUGIN_USES}. */
export type PluginUse = (typeof PLUGIN_USES)[number]

/** The pipeline stage a plugin belongs to. */
export type PluginStage = 'stt' | 'turn_manager' | 'agent' | 'tts'

const STAGE_ORDER: readonly PluginStage[] = ['stt', 'turn_manager', 'agent', 'tts']

/** The stage of a plugin name (`stt.vendor_a` -> `stt`). */
export function pluginStage(use: PluginUse): PluginStage {
  if (use === 'turn_manager') return 'turn_manager'
  return use.slice(0, use.indexOf('.')) as PluginStage
}

/** The ordered plugin list, built per URL policy (agent.webhook's url depends on it). */
export function pluginsSchema(policy: UrlPolicy) {
  const plugin = z.discriminatedUnion('use', [
    z.strictObject({ use: z.literal('stt.vendor_a'), options: sttVendorAOptionsSchema }),
    z.strictObject({ use: z.literal('stt.vendor_b'), options: sttVendorBOptionsSchema }),
    z.strictObject({ use: z.literal('turn_manager'), options: turnManagerOptionsSchema }),
    z.strictObject({ use: z.literal('agent.llm'), options: agentLlmOptionsSchema }),
    z.strictObject({ use: z.literal('agent.webhook'), options: agentWebhookOptionsSchema(policy) }),
    z.strictObject({ use: z.literal('tts.vendor_a'), options: ttsVendorAOptionsSchema }),
    z.strictObject({ use: z.literal('tts.local'), options: ttsLocalOptionsSchema }),
  ])
  return z.array(plugin).superRefine((plugins, ctx) => {
    for (const problem of pluginOrderProblems(plugins.map((p) => p.use))) {
      ctx.addIssue({ code: 'custom', message: problem })
    }
  })
}

/**
 * What is wrong with the order and multiplicity of a plugin list: at most one stt.*, exactly one
 * turn_manager, exactly one agent.*, at most one tts.*, in that order.
 */
export function pluginOrderProblems(uses: readonly PluginUse[]): string[] {
  const problems: string[] = []
  const stages = uses.map(pluginStage)
  const count = (stage: PluginStage) => stages.filter((s) => s === stage).length
  const ranks = stages.map((stage) => STAGE_ORDER.indexOf(stage))
  if (ranks.some((rank, i) => i > 0 && rank < (ranks[i - 1] ?? 0))) {
    problems.push('must be in the order stt.*, turn_manager, agent.*, tts.*')
  }
  if (count('stt') > 1) problems.push('must contain at most one stt.* plugin')
  if (count('turn_manager') !== 1) problems.push('must contain exactly one turn_manager plugin')
  if (count('agent') !== 1) problems.push('must contain exactly one agent.* plugin')
  if (count('tts') > 1) problems.push('must contain at most one tts.* plugin')
  return problems
}

/** One validated plugin entry, discriminated on `use`. */
export type PluginConfig = z.output<ReturnType<typeof pluginsSchema>>[number]

/** The validated plugin entry whose `use` is `U`. */
export type PluginOf<U extends PluginUse> = Extract<PluginConfig, { use: U }>
