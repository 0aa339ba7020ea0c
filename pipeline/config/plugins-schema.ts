import { z } from 'zod'
import { agentWebhookOptionsSchema } from '../options/agent-options.js'
import { ttsLocalOptionsSchema } from '../options/tts-options.js'
import { turnManagerOptionsSchema } from '../options/turn-manager-options.js'
import type { UrlPolicy } from '../options/webhook-url.js'
import type { VendorRow } from '../vendors/table/vendor-row.js'
import { VENDOR_TABLE } from '../vendors/table/vendor-table.js'

type Table = typeof VENDOR_TABLE
type Row = Table[number]

/**
 * The plugin names of a vendor table in pipeline order: its rows (stt.*, agent.llm, tts.*) with the plugins that
 * are not vendors (turn_manager, agent.webhook, tts.local). A vendor's row is all its plugin entry needs.
 */
function pluginUsesOf(table: readonly VendorRow[]): string[] {
  const ids = (kind: VendorRow['kind']) => table.filter((row) => row.kind === kind).map((row) => row.id)
  return [...ids('stt'), 'turn_manager', ...ids('llm'), 'agent.webhook', ...ids('tts'), 'tts.local']
}

/** Every plugin name of the vendor table, in pipeline order. */
export const PLUGIN_USES = pluginUsesOf(VENDOR_TABLE) as readonly PluginUse[]

/** One of {@link PLUGIN_USES}. */
export type PluginUse = Row['id'] | 'turn_manager' | 'agent.webhook' | 'tts.local'

/** The pipeline stage a plugin belongs to. */
export type PluginStage = 'stt' | 'turn_manager' | 'agent' | 'tts'

const STAGE_ORDER: readonly PluginStage[] = ['stt', 'turn_manager', 'agent', 'tts']

/** The stage of a plugin name (`stt.vendor_a` -> `stt`). */
export function pluginStage(use: PluginUse): PluginStage {
  if (use === 'turn_manager') return 'turn_manager'
  return use.slice(0, use.indexOf('.')) as PluginStage
}

/**
 * The ordered plugin list, built per URL policy (agent.webhook's url depends on it) from the vendor table's rows and
 * the plugins that are not vendors. `table` is the vendor table (a test may add a row).
 */
export function pluginsSchema(policy: UrlPolicy, table: readonly VendorRow[] = VENDOR_TABLE) {
  const others: Record<string, z.ZodType> = {
    turn_manager: entry('turn_manager', turnManagerOptionsSchema),
    'agent.webhook': entry('agent.webhook', agentWebhookOptionsSchema(policy)),
    'tts.local': entry('tts.local', ttsLocalOptionsSchema),
  }
  const rows = new Map<string, z.ZodType>(table.map((row) => [row.id, entry(row.id, row.options)]))
  const ordered = pluginUsesOf(table).map((use) => rows.get(use) ?? others[use]!)
  // Typed as the default table's entries (each id with its own options) and the three others.
  type Others =
    | ReturnType<typeof entry<'turn_manager', typeof turnManagerOptionsSchema>>
    | ReturnType<typeof entry<'agent.webhook', ReturnType<typeof agentWebhookOptionsSchema>>>
    | ReturnType<typeof entry<'tts.local', typeof ttsLocalOptionsSchema>>
  const plugin = z.discriminatedUnion('use', ordered as unknown as [...VendorEntries<Table>, ...Others[]])
  return z.array(plugin).superRefine((plugins, ctx) => {
    for (const problem of pluginOrderProblems(plugins.map((p) => p.use))) {
      ctx.addIssue({ code: 'custom', message: problem })
    }
  })
}

/** One plugin entry's schema: its `use` and its options, nothing else. */
function entry<U extends string, S extends z.ZodType>(use: U, options: S) {
  return z.strictObject({ use: z.literal(use), options })
}

/** The entries of the vendor table's rows, typed row by row (each id with its own options). */
type VendorEntries<T extends readonly VendorRow[]> = { -readonly [K in keyof T]: ReturnType<typeof entry<T[K]['id'], T[K]['options']>> }

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
