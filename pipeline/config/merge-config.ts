import { isPlainObject } from '../options/rules.js'

/**
 * Deep-merges a per-session override onto an agent config: plain objects merge key by key, everything
 * else (arrays such as `plugins`, `events`, `keyterms`; scalars; null) replaces the agent's value whole
 * `undefined` in the override leaves the agent's value. Inputs are not modified. Validate the result with
 * `validatePipelineConfig`.
 */
export function mergeConfig(agentConfig: unknown, override: unknown): unknown {
  if (override === undefined) return cloneJson(agentConfig)
  if (!isPlainObject(agentConfig) || !isPlainObject(override)) return cloneJson(override)
  const merged = cloneJson(agentConfig) as Record<string, unknown>
  for (const [key, value] of Object.entries(override)) {
    if (value === undefined) continue
    // defineProperty keeps a "__proto__" key an ordinary own key (rejected later as unknown) instead of
    // letting it replace the prototype.
    Object.defineProperty(merged, key, {
      value: mergeConfig(Object.hasOwn(merged, key) ? merged[key] : undefined, value),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return merged
}

function cloneJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneJson)
  if (!isPlainObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(out, key, { value: cloneJson(item), enumerable: true, writable: true, configurable: true })
  }
  return out
}
