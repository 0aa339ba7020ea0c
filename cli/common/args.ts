import { parseArgs, type ParseArgsConfig } from 'node:util'
import { CliError } from './cli-errors.js'

type Options = NonNullable<ParseArgsConfig['options']>

/** Parsed flags of one command: string or boolean values by name, and the positional arguments. */
export interface Parsed {
  values: Record<string, string | boolean | undefined>
  positionals: string[]
}

/**
 * Parses a command's arguments (`--name value`, `--name=value`, booleans); every command also takes `--help`.
 * Unknown options, missing values and extra positionals are usage errors (exit code 2).
 */
export function parseCommand(args: string[], options: Options, maxPositionals = 0): Parsed {
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true })
  } catch (e) {
    throw new CliError((e as Error).message, 2)
  }
  if (parsed.positionals.length > maxPositionals) {
    throw new CliError(`unexpected argument "${parsed.positionals[maxPositionals]}"`, 2)
  }
  return { values: parsed.values as Parsed['values'], positionals: parsed.positionals }
}

/** A string flag's value, or undefined; an empty value is a usage error. */
export function stringFlag(p: Parsed, name: string): string | undefined {
  const v = p.values[name]
  if (v === undefined) return undefined
  if (typeof v !== 'string' || v.trim() === '') throw new CliError(`--${name} needs a value`, 2)
  return v.trim()
}
