import type { AgentStep } from '../agent/agent-step.js'
import { createAgentStep, type AgentPluginConfig, type AgentStepDeps } from '../agent/create-agent-step.js'
import type { PluginConfig } from '../config/plugins-schema.js'
import type { VendorAvailability } from '../config/vendor-rewrites.js'
import type { PipelineConfig } from '../config/schema.js'
import type { SttStream, SttStreamOptions } from './stt/stt-stream.js'
import { createLocalTtsStream } from './tts/local-tts.js'
import type { TtsStream, TtsStreamOptions } from './tts/tts-stream.js'
import type { VendorSetting } from './socket/vendor-transport.js'
import type { LlmVendorRow, SttVendorRow, TtsVendorRow, VendorKind, VendorRow } from './table/vendor-row.js'
import { VENDOR_TABLE } from './table/vendor-table.js'

/** Each vendor's endpoint as the gateway configured it, keyed by plugin id; an absent id is not configured. */
export type VendorSettings = Readonly<Partial<Record<string, VendorSetting>>>

type RowOf<K extends VendorKind> = Extract<VendorRow, { kind: K }>

/** The row of kind `kind` for a plugin id, if the table has one. */
export function vendorRow<K extends VendorKind>(kind: K, id: string, table: readonly VendorRow[] = VENDOR_TABLE): RowOf<K> | undefined {
  return table.find((row): row is RowOf<K> => row.id === id && row.kind === kind)
}

/** A plugin entry's `use` and `options`, whether or not the agent configuration's plugin list names it yet. */
export interface VendorPlugin {
  use: string
  options: unknown
}

/**
 * Opens a speech-to-text stream for a plugin entry through its vendor's row. It connects in the background (audio
 * pushed meanwhile is buffered); connection problems arrive as `error` events, never as exceptions.
 */
export function createSttStream(plugin: VendorPlugin, stream: SttStreamOptions, table: readonly VendorRow[] = VENDOR_TABLE): SttStream {
  return rowOrThrow<SttVendorRow>(vendorRow('stt', plugin.use, table), plugin.use).create(plugin.options, stream)
}

/**
 * Opens a text-to-speech stream for a plugin entry through its vendor's row (`tts.local` has its own factory). It
 * connects in the background; text pushed meanwhile is held; connection problems arrive as `error` events.
 */
export function createTtsStream(plugin: VendorPlugin, stream: TtsStreamOptions, table: readonly VendorRow[] = VENDOR_TABLE): TtsStream {
  return rowOrThrow<TtsVendorRow>(vendorRow('tts', plugin.use, table), plugin.use).create(plugin.options, stream)
}

function rowOrThrow<R extends VendorRow>(row: R | undefined, id: string): R {
  if (row === undefined) throw new Error(`no vendor row for plugin ${id}`)
  return row
}

/** Where a speech stream of a session goes besides its endpoint, which the vendor table supplies. */
export type SessionStreamOptions<O> = Omit<O, 'endpoint'>

/**
 * The STT stream of a session's configuration: its `stt.*` plugin's vendor, looked up by id. Undefined when the
 * configuration has no STT step or the vendor has no key here (the pipeline then tells the caller to type).
 */
export function openSessionStt(
  config: PipelineConfig,
  vendors: VendorSettings,
  stream: SessionStreamOptions<SttStreamOptions>,
  table: readonly VendorRow[] = VENDOR_TABLE,
): SttStream | undefined {
  const plugins: readonly VendorPlugin[] = config.plugins
  const plugin = plugins.find((p) => vendorRow('stt', p.use, table) !== undefined)
  if (plugin === undefined) return undefined
  const setting = vendors[plugin.use]
  if (setting?.apiKey === undefined) return undefined
  // Word timings serve the recording's redaction: not asked for (where asking costs) when nothing is recorded.
  const wantWords = stream.wantWords ?? config.privacy?.recordings !== false
  return createSttStream(plugin, { ...stream, wantWords, endpoint: { url: setting.url, apiKey: setting.apiKey } }, table)
}

/**
 * The TTS stream of a session's configuration: `tts.local`, or its `tts.*` plugin's vendor looked up by id. A vendor
 * without a key here speaks with `tts.local` instead (an agent saved with a vendor voice still speaks on a machine
 * without the key). Undefined when the configuration has no TTS step.
 */
export function openSessionTts(
  config: PipelineConfig,
  vendors: VendorSettings,
  stream: SessionStreamOptions<TtsStreamOptions>,
  table: readonly VendorRow[] = VENDOR_TABLE,
): TtsStream | undefined {
  const plugins: readonly (PluginConfig | VendorPlugin)[] = config.plugins
  const plugin = plugins.find((p) => p.use === 'tts.local' || vendorRow('tts', p.use, table) !== undefined)
  if (plugin === undefined) return undefined
  const local = { outputFormat: stream.outputFormat, signal: stream.signal, logger: stream.logger }
  if (isLocalTts(plugin)) return createLocalTtsStream(plugin.options, local)
  const row = rowOrThrow<TtsVendorRow>(vendorRow('tts', plugin.use, table), plugin.use)
  const setting = vendors[row.id]
  if (setting?.apiKey === undefined) {
    stream.logger?.warn({}, `${row.id} has no API key configured (${row.env.key}): speaking with tts.local instead`)
    return createLocalTtsStream({ voice: 'en-us', rate: 175 }, local)
  }
  return row.create(plugin.options, { ...stream, endpoint: { url: setting.url, apiKey: setting.apiKey } })
}

function isLocalTts(plugin: PluginConfig | VendorPlugin): plugin is Extract<PluginConfig, { use: 'tts.local' }> {
  return plugin.use === 'tts.local'
}

/**
 * The agent step of a plugin entry. `agent.webhook` is the customer's backend, not a vendor; an LLM step is built
 * by its vendor's row, looked up by id, with that vendor's endpoint.
 */
export function openAgentStep(
  plugin: AgentPluginConfig,
  vendors: VendorSettings,
  deps: Omit<AgentStepDeps, 'llm'>,
  table: readonly VendorRow[] = VENDOR_TABLE,
): AgentStep {
  const row: LlmVendorRow | undefined = vendorRow('llm', plugin.use, table)
  const setting = row === undefined ? undefined : vendors[row.id]
  const llm = { baseUrl: setting?.url ?? '', apiKey: setting?.apiKey }
  if (row === undefined) return createAgentStep(plugin, { ...deps, llm })
  return row.create(plugin.options, { ...deps, llm })
}

/** Which STT and TTS vendors have a key in `vendors`, for every row of the table. */
export function availableVendors(vendors: VendorSettings, table: readonly VendorRow[] = VENDOR_TABLE): VendorAvailability {
  const caps: Record<'stt' | 'tts', Record<string, boolean>> = { stt: {}, tts: {} }
  for (const row of table) {
    if (row.kind === 'llm') continue
    caps[row.kind][row.id.slice(row.kind.length + 1)] = vendors[row.id]?.apiKey !== undefined
  }
  return caps
}

/** The variables that configure speech recognition, one per STT row: its key, or its URL for a keyless vendor. */
export function sttSetupVariables(table: readonly VendorRow[] = VENDOR_TABLE): string[] {
  return table.filter((row) => row.kind === 'stt').map((row) => (row.env.keyless ? row.env.url : row.env.key))
}
