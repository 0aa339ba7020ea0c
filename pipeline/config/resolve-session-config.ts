import { mergeConfig } from './merge-config.js'
import type { PipelineConfig } from './schema.js'
import { validateConfigOverride, validatePipelineConfig, type ValidateOptions, type ValidationResult } from './validate.js'

/**
 * The config a session runs with: the agent's config with the authorization override merged on top
 * (override wins). Errors from the override alone are reported first, with the override's paths.
 */
export function resolveSessionConfig(agentConfig: unknown, override: unknown, opts?: ValidateOptions): ValidationResult<PipelineConfig> {
  if (override === undefined || override === null) return validatePipelineConfig(agentConfig, opts)
  const checked = validateConfigOverride(override, opts)
  if (!checked.ok) return checked
  return validatePipelineConfig(mergeConfig(agentConfig, checked.config), opts)
}
