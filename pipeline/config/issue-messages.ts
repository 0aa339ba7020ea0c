import type { z } from 'zod'

type RawIssue = z.core.$ZodRawIssue

const TYPE_NAMES: Record<string, string> = {
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean',
  array: 'an array',
  object: 'an object',
  record: 'an object',
}

/** `['plugins', 1, 'options', 'x']` -> `plugins[1].options.x`; odd keys are quoted: `custom_headers["X Y"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = ''
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`
    else if (typeof key === 'string' && /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key)) out += out === '' ? key : `.${key}`
    else out += `[${JSON.stringify(String(key))}]`
  }
  return out === '' ? 'config' : out
}

function describeValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution)
    }
    previous = current
  }
  return previous[b.length] ?? 0
}

/** The known key a typo most likely meant: a close edit or a key it abbreviates (`voice` -> `voice_id`). */
export function suggestKey(unknown: string, known: readonly string[]): string | undefined {
  const typo = unknown.toLowerCase()
  let best: string | undefined
  let bestDistance = Math.max(1, Math.floor(typo.length / 3)) + 1
  for (const candidate of known) {
    const distance = editDistance(typo, candidate.toLowerCase())
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  if (best !== undefined || typo.length < 4) return best
  return known.find((candidate) => candidate.toLowerCase().startsWith(typo))
}

function knownKeys(issue: RawIssue): string[] {
  const def = (issue.inst as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def
  return Object.keys(def?.shape ?? {})
}

function sizeMessage(origin: unknown, relation: 'least' | 'most', bound: number, inclusive: boolean): string {
  if (origin === 'string') {
    if (relation === 'least' && bound === 1) return 'must not be empty'
    return `must be at ${relation} ${bound} characters`
  }
  if (origin === 'array' || origin === 'set') {
    if (relation === 'least' && bound === 1) return 'must not be empty'
    return `must contain at ${relation} ${bound} items`
  }
  if (!inclusive) return `must be ${relation === 'least' ? 'greater' : 'less'} than ${bound}`
  return `must be at ${relation} ${bound}`
}

/**
 * Per-parse zod error map: the rule part of a message (the path is prefixed later). Schema-level
 * messages (bounds written as "between a and b") take precedence over this map. For
 * `unrecognized_keys` the message holds one line per key, in `keys` order.
 */
export function ruleMessage(issue: RawIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required'
      return `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`
    case 'too_small':
      return sizeMessage(issue.origin, 'least', Number(issue.minimum), issue.inclusive !== false)
    case 'too_big':
      return sizeMessage(issue.origin, 'most', Number(issue.maximum), issue.inclusive !== false)
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${describeValue(issue.values[0])}`
        : `must be one of ${issue.values.map(describeValue).join(', ')}`
    case 'invalid_union':
      // A discriminated union names the discriminator's accepted values when none matched.
      if (issue.discriminator !== undefined && Array.isArray(issue.options)) {
        return `must be one of ${(issue.options as unknown[]).map(describeValue).join(', ')}`
      }
      return 'is not valid'
    case 'invalid_format':
      return issue.format === 'regex' ? 'has an invalid format' : `must be a valid ${issue.format}`
    case 'unrecognized_keys': {
      const known = knownKeys(issue)
      return issue.keys
        .map((key) => {
          const suggestion = suggestKey(key, known)
          if (suggestion === undefined) return 'is not a known field'
          return `is not a known field (did you mean ${suggestion}?)`
        })
        .join('\n')
    }
    case 'invalid_key':
      return 'has an invalid key'
    case 'invalid_element':
      return 'has an invalid element'
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`
    default:
      return 'is not valid'
  }
}

/** Human messages for finalized issues: `<path> <rule>`, one per unknown key. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const messages: string[] = []
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const lines = issue.message.split('\n')
      issue.keys.forEach((key, i) => {
        messages.push(`${formatPath([...issue.path, key])} ${lines[i] ?? 'is not a known field'}`)
      })
    } else {
      messages.push(`${formatPath(issue.path)} ${issue.message}`)
    }
  }
  return messages
}
