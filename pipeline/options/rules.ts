import { z } from 'zod'

/** A number in [min, max]; both violations read "must be between min and max". */
export function numberBetween(min: number, max: number) {
  const error = `must be between ${min} and ${max}`
  return z.number().min(min, { error }).max(max, { error })
}

/** An integer in [min, max]; out-of-range values read "must be between min and max". */
export function integerBetween(min: number, max: number) {
  const error = `must be between ${min} and ${max}`
  return z.number().int().min(min, { error }).max(max, { error })
}

/** A non-negative integer with no upper bound beyond the safe-integer range. */
export function nonNegativeInteger() {
  return z.number().int().min(0)
}

/** A non-empty string of at most `max` characters. */
export function nonEmptyString(max: number) {
  return z.string().min(1).max(max)
}

/** A list of distinct values from `values`; a repeated value is named in the error. */
export function distinctList<const T extends readonly [string, ...string[]]>(values: T) {
  return z.array(z.enum(values)).superRefine((list, ctx) => {
    const repeated = new Set(list.filter((value, index) => list.indexOf(value) !== index))
    for (const value of repeated) ctx.addIssue({ code: 'custom', message: `must not repeat "${value}"` })
  })
}

/** Key terms or boosted words for speech-to-text: up to 100 non-empty strings of up to 100 characters. */
export function termList() {
  return z.array(nonEmptyString(100)).max(100)
}

/** A plain JSON object (not an array, not null) with string keys. */
export function plainObject() {
  return z.record(z.string(), z.unknown())
}

/**
 * A transport switch: `true`/`false`, or `{ enabled: boolean }` as the SPEC's override example writes it.
 * Both forms normalise to a boolean.
 */
export function toggle() {
  return z
    .union([z.boolean(), z.strictObject({ enabled: z.boolean() })], {
      error: 'must be a boolean or an object { "enabled": boolean }',
    })
    .transform((value) => (typeof value === 'boolean' ? value : value.enabled))
}

/** True for a plain object (the shape JSON.parse produces for `{...}`). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}
