import { formatIssues, ruleMessage } from './issue-messages.js'
import { configOverrideSchema, pipelineConfigSchema, type ConfigOverride, type PipelineConfig } from './schema.js'
import type { UrlPolicy } from '../options/webhook-url.js'

/** Options of {@link validatePipelineConfig} and {@link validateConfigOverride}. */
export type ValidateOptions = UrlPolicy

/** Outcome of a validation: the normalised value, or every problem found as a human message. */
export type ValidationResult<T> = { ok: true; config: T } | { ok: false; errors: string[] }

// Schemas are built once per URL policy (a process has one or two); building them per call would dominate
// validation time. The cache is bounded all the same.
const MAX_POLICIES = 16
const configSchemas = new Map<string, ReturnType<typeof pipelineConfigSchema>>()
const overrideSchemas = new Map<string, ReturnType<typeof configOverrideSchema>>()

function cached<S>(cache: Map<string, S>, opts: ValidateOptions | undefined, build: (policy: UrlPolicy) => S): S {
  const policy: UrlPolicy = {
    allowInsecureLoopback: opts?.allowInsecureLoopback === true,
    trustedPrefixes: opts?.trustedPrefixes ?? [],
    ...(opts?.insecureHint === undefined ? {} : { insecureHint: opts.insecureHint }),
  }
  const key = JSON.stringify(policy)
  let schema = cache.get(key)
  if (schema === undefined) {
    if (cache.size >= MAX_POLICIES) cache.clear()
    schema = build(policy)
    cache.set(key, schema)
  }
  return schema
}

/** Validates an agent config, fills every default and normalises `clients` toggles to booleans. */
export function validatePipelineConfig(input: unknown, opts?: ValidateOptions): ValidationResult<PipelineConfig> {
  const result = cached(configSchemas, opts, pipelineConfigSchema).safeParse(input, { error: ruleMessage })
  return result.success ? { ok: true, config: result.data } : { ok: false, errors: formatIssues(result.error.issues) }
}

/**
 * Validates a per-session override on its own (shape and bounds of the fields it gives, no defaults).
 * The merged result still has to pass {@link validatePipelineConfig}.
 */
export function validateConfigOverride(input: unknown, opts?: ValidateOptions): ValidationResult<ConfigOverride> {
  const result = cached(overrideSchemas, opts, configOverrideSchema).safeParse(input, { error: ruleMessage })
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
