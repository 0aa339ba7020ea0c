import { z } from 'zod'
import { pipelineConfigSchema } from '../../../pipeline/index.js'

/** One field of the agent configuration: where it is, and its default when it has one. */
export interface ConfigField {
  /** `config` for the root fields, or a plugin's `use` (`turn_manager`) for that plugin's options. */
  section: string
  /** The field's path inside its section: `vad.buffer_frames`, `transfer.targets[].name`, `base_timeout_ms`. */
  path: string
  default?: unknown
}

type Json = {
  type?: string | string[]
  properties?: Record<string, Json>
  items?: Json
  anyOf?: Json[]
  oneOf?: Json[]
  default?: unknown
  const?: unknown
}

/** The alternatives of a union node, or the node itself. */
function alternatives(node: Json): Json[] {
  const alts = node.anyOf ?? node.oneOf
  return alts === undefined ? [node] : alts.flatMap(alternatives)
}

/** The object shapes a node's value takes when every alternative is an object (or null), else none. */
function objectShapes(node: Json): Json[] {
  const alts = alternatives(node).map((alt) => (alt.type === 'array' && alt.items !== undefined ? alt.items : alt))
  const nonNull = alts.filter((alt) => alt.type !== 'null')
  if (nonNull.length === 0 || nonNull.some((alt) => alt.properties === undefined)) return []
  return nonNull
}

function isArray(node: Json): boolean {
  return alternatives(node).some((alt) => alt.type === 'array')
}

function walk(node: Json, prefix: string, section: string, out: Map<string, ConfigField>): void {
  for (const shape of objectShapes(node)) {
    for (const [name, child] of Object.entries(shape.properties ?? {})) {
      const path = prefix === '' ? name : `${prefix}.${name}`
      const key = `${section} ${path}`
      if (!out.has(key)) out.set(key, { section, path, ...(child.default !== undefined ? { default: child.default } : {}) })
      walk(child, isArray(child) ? `${path}[]` : path, section, out)
    }
  }
}

/**
 * Every field of the agent configuration schema (`pipeline/config/schema.ts` with every plugin's options), read from
 * the schema itself through zod's JSON Schema export: the agent reference is checked against this list.
 */
export function agentConfigFields(): ConfigField[] {
  const schema = z.toJSONSchema(pipelineConfigSchema({}), { io: 'input', unrepresentable: 'any' }) as Json
  const out = new Map<string, ConfigField>()
  const root: Json = { type: 'object', properties: { ...schema.properties } }
  const plugins = root.properties?.plugins
  if (root.properties !== undefined) delete root.properties.plugins
  out.set('config plugins', { section: 'config', path: 'plugins' })
  walk(root, '', 'config', out)
  for (const entry of alternatives(plugins?.items ?? {})) {
    const use = entry.properties?.use?.const
    const options = entry.properties?.options
    if (typeof use !== 'string' || options === undefined) continue
    out.set(`${use} `, { section: use, path: '' })
    walk(options, '', use, out)
  }
  return [...out.values()]
}
