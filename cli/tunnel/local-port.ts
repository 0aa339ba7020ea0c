import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseDotEnv } from '../common/agent-id.js'
import { CliError } from '../common/cli-errors.js'
import { parsePort } from '../init/init-command.js'

/** The SPEC's default local port, when neither `--port` nor the project's `.env` names one. */
export const DEFAULT_LOCAL_PORT = 3000

/** The local port and where it came from, for the line the tunnel prints. */
export interface LocalPort {
  port: number
  source: string
}

/**
 * The port the tunnel forwards to: `--port`, else the `PORT` entry of `<dir>/.env` (what `voxgate init --port`
 * writes, and what the project's `npm start` listens on), else 3000. An invalid value is a usage error (exit 2).
 */
export function resolveLocalPort(flag: string | undefined, dir: string): LocalPort {
  if (flag !== undefined) return { port: parsePort(flag), source: '--port' }
  const file = join(dir, '.env')
  let text: string | undefined
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    text = undefined
  }
  const entry = text === undefined ? undefined : parseDotEnv(text).find(([name]) => name === 'PORT')
  if (entry === undefined || entry[1] === '')
    return { port: DEFAULT_LOCAL_PORT, source: 'the default; --port or a PORT entry in .env changes it' }
  try {
    return { port: parsePort(entry[1]), source: `PORT in ${file}` }
  } catch {
    throw new CliError(`PORT in ${file} must be a number from 1 to 65535, not "${entry[1]}" (or pass --port)`, 2)
  }
}
