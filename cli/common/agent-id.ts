import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CliError } from './cli-errors.js'

/** The environment variable holding the agent id; a `.env` entry whose name ends in it also counts. */
export const AGENT_ID_VAR = 'VOXGATE_AGENT_ID'
/** The environment variable holding the agent's webhook secret (written by `voxgate init`). */
export const WEBHOOK_SECRET_VAR = 'VOXGATE_WEBHOOK_SECRET'

/** Parses a `.env` file: `NAME=value` lines, `#` comments, optional `export `, single or double quotes. */
export function parseDotEnv(text: string): [string, string][] {
  const out: [string, string][] = []
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*)$/.exec(line)
    if (m === null) continue
    let value = m[2] ?? ''
    const quoted = /^(['"])(.*)\1$/.exec(value)
    if (quoted !== null) value = quoted[2] ?? ''
    else value = value.replace(/\s+#.*$/, '').trim()
    out.push([m[1] ?? '', value])
  }
  return out
}

/** Where an agent id was found, for the message the CLI prints. */
export interface ResolvedAgentId {
  agentId: string
  source: string
}

/**
 * The agent id the SPEC's way: `--agent-id`, else the VOXGATE_AGENT_ID environment variable, else the first entry
 * of `<dir>/.env` whose name ends in VOXGATE_AGENT_ID (so `NEXT_PUBLIC_VOXGATE_AGENT_ID` counts); none: a failure.
 */
export function resolveAgentId(flag: string | undefined, env: NodeJS.ProcessEnv, dir: string): ResolvedAgentId {
  if (flag !== undefined) return { agentId: flag, source: '--agent-id' }
  const fromEnv = env[AGENT_ID_VAR]?.trim()
  if (fromEnv !== undefined && fromEnv !== '') return { agentId: fromEnv, source: `the ${AGENT_ID_VAR} environment variable` }
  let text: string | undefined
  try {
    text = readFileSync(join(dir, '.env'), 'utf8')
  } catch {
    text = undefined
  }
  if (text !== undefined) {
    const entry = parseDotEnv(text).find(([name, value]) => name.endsWith(AGENT_ID_VAR) && value !== '')
    if (entry !== undefined) return { agentId: entry[1], source: `${entry[0]} in ${join(dir, '.env')}` }
  }
  throw new CliError(
    `no agent id: pass --agent-id <id>, set ${AGENT_ID_VAR}, or run in a folder whose .env has a ${AGENT_ID_VAR} entry (voxgate init writes one)`,
  )
}
