import { formatIssues, ruleMessage } from './issue-messages.js'
import { configOverrideSchema, pipelineConfigSchema, type ConfigOverride, type PipelineConfig } from './schema.js'
import type { UrlPolicy } from './webhook-url.js'

/** Options of {@link validatePipelineConfig} and {@link validateConfigOverride}. */
export type ValidateOptions = UrlPolicy

/** Outcome of a validation: the normalised value, or every problem found as a human message. */
export type ValidationResult<T> = { ok: true; config: T } | { ok: false; errors: string[] }

// Schemas are built once per URL policy; building them per call would dominate validation time.
const configSchemas = {
  strict: pipelineConfigSchema({ allowInsecureLoopback: false }),
  loopback: pipelineConfigSchema({ allowInsecureLoopback: true }),
}
const overrideSchemas = {
  strict: configOverrideSchema({ allowInsecureLoopback: false }),
  loopback: configOverrideSchema({ allowInsecureLoopback: true }),
}

function policyKey(opts: ValidateOptions | undefined): 'strict' | 'loopback' {
  return opts?.allowInsecureLoopback === true ? 'loopback' : 'strict'
}

/** Validates an agent config, fills every default and normalises `clients` toggles to booleans. */
export function validatePipelineConfig(input: unknown, opts?: ValidateOptions): ValidationResult<PipelineConfig> {
  const result = configSchemas[policyKey(opts)].safeParse(input, { error: ruleMessage })
  return result.success ? { ok: true, config: result.data } : { ok: false, errors: formatIssues(result.error.issues) }
}

/**
 * Validates a per-session override on its own (shape and bounds of the fields it gives, no defaults).
 * The merged result still has to pass {@link validatePipelineConfig}.
 */
export function validateConfigOverride(input: unknown, opts?: ValidateOptions): ValidationResult<ConfigOverride> {
  const result = overrideSchemas[policyKey(opts)].safeParse(input, { error: ruleMessage })
  return result.success ? { ok: true, config: result.data } : { ok: false, errors: formatIssues(result.error.issues) }
}

/** Thrown by helpers that must produce a valid config; `errors` are the validation messages. */
export class PipelineConfigError extends Error {
  /** Stable error code. */
  readonly code = 'invalid_pipeline_config'
  /** Every validation message. */
  readonly errors: readonly string[]

  constructor(errors: readonly string[]) {
    super(`invalid pipeline config: ${errors.join('; ')}`)
    this.name = 'PipelineConfigError'
    this.errors = errors
  }
}

/** Like {@link validatePipelineConfig} but throws {@link PipelineConfigError} when invalid. */
export function parsePipelineConfig(input: unknown, opts?: ValidateOptions): PipelineConfig {
  const result = validatePipelineConfig(input, opts)
  if (!result.ok) throw new PipelineConfigError(result.errors)
  return result.config
}
