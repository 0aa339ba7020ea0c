import type { z } from 'zod'
import { voxError } from '../../core/errors.js'
import { formatIssues, ruleMessage } from '../../pipeline/index.js'

/**
 * Parses `input` with `schema` or throws a 400 naming every bad field. Request bodies use the same message
 * rules as the pipeline configuration, so every error a client sees reads the same way.
 */
export function parseOr400<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const r = schema.safeParse(input, { error: ruleMessage })
  if (r.success) return r.data
  const details = formatIssues(r.error.issues)
  throw voxError('validation_failed', details.join('; '), { details })
}
