/** Reading environment variables for the configuration: each reader names the variable when its value is wrong. */
/** Raised when an environment variable has an invalid value; the message names the variable. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`)
    this.name = 'ConfigError'
  }
}

/** The environment variables a setting is read from. */
export type Env = Record<string, string | undefined>

/** A variable's trimmed value; undefined when unset or blank. */
export function str(env: Env, name: string): string | undefined {
  const v = env[name]
  return v === undefined || v.trim() === '' ? undefined : v.trim()
}

/** A whole number from `min` to `max`, `def` when unset. */
export function int(env: Env, name: string, def: number, min: number, max: number): number {
  return optionalInt(env, name, min, max) ?? def
}

/** A whole number from `min` to `max`; undefined when the variable is unset (a setting with no default). */
export function optionalInt(env: Env, name: string, min: number, max: number): number | undefined {
  const raw = str(env, name)
  if (raw === undefined) return undefined
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`)
  const n = Number(raw)
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`)
  return n
}

/** A number of at least `min`, `def` when unset. */
export function num(env: Env, name: string, def: number, min: number): number {
  const raw = str(env, name)
  if (raw === undefined) return def
  const n = Number(raw)
  if (!Number.isFinite(n) || n < min) throw new ConfigError(name, `must be a number >= ${min}, got "${raw}"`)
  return n
}

/** A switch: 1/true/yes or 0/false/no. */
export function bool(env: Env, name: string): boolean {
  const raw = str(env, name)
  if (raw === undefined) return false
  if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true
  if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false
  throw new ConfigError(name, `must be 1/true/yes or 0/false/no, got "${raw}"`)
}
