import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { parseCommand, stringFlag } from '../common/args.js'
import { AGENT_NOT_OWNED, CliError } from '../common/cli-errors.js'
import { api, errorText, resolveConnection } from '../common/gateway-client.js'
import { projectFiles } from './project-files.js'

export const INIT_USAGE = `usage: voxgate init [folder] [--agent-id <id>] [--port <number>] [--gateway <url>] [--api-key <key>]

Creates an example agent backend in a new folder (default ./voxgate-agent): package.json, server.js answering
POST /api/agent (checks service-signature; a welcome for session.start, an SSE echo for each message), a test,
a README and a .env with the agent id and its webhook secret. Without --agent-id a new agent is created.
Then: cd <folder> && npm install && npm start, and \`voxgate tunnel\` in that folder.

  --agent-id <id>    link an existing agent of your organization instead of creating one
  --port <number>    the port the project listens on (default 3000; the tunnel's default too)
  --gateway <url>    gateway URL (default: VOXGATE_GATEWAY, the login's, http://localhost:8080)
  --api-key <key>    organization API key (default: VOXGATE_API_KEY, the key stored by voxgate login)
`

/** `voxgate init`: returns the exit code. */
export async function initCommand(args: string[], env: NodeJS.ProcessEnv, out: (s: string) => void): Promise<number> {
  const p = parseCommand(
    args,
    { 'agent-id': { type: 'string' }, port: { type: 'string' }, gateway: { type: 'string' }, 'api-key': { type: 'string' } },
    1,
  )
  if (p.values.help === true) {
    out(INIT_USAGE)
    return 0
  }
  const port = parsePort(stringFlag(p, 'port') ?? '3000')
  const dir = resolve(p.positionals[0] ?? 'voxgate-agent')
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new CliError(`${dir} exists and is not empty: choose another folder`)
  const conn = resolveConnection(p, env)
  const agentIdFlag = stringFlag(p, 'agent-id')

  let agent: { id: string; webhook_secret: string }
  if (agentIdFlag !== undefined) {
    const r = await api(conn.gateway, 'GET', `/v1/agents/${encodeURIComponent(agentIdFlag)}`, { apiKey: conn.apiKey })
    if (r.status === 404) throw new CliError(AGENT_NOT_OWNED)
    if (r.status !== 200) throw new CliError(`cannot read agent ${agentIdFlag}: ${errorText(r)}`)
    agent = r.body as unknown as typeof agent
  } else {
    const name = basename(dir)
    const r = await api(conn.gateway, 'POST', '/v1/agents', { apiKey: conn.apiKey, body: { name } })
    if (r.status !== 201) throw new CliError(`cannot create an agent: ${errorText(r)}`)
    agent = r.body as unknown as typeof agent
    out(`created agent ${agent.id}\n`)
  }
  if (typeof agent.webhook_secret !== 'string') throw new CliError('the gateway did not return the agent webhook secret')

  const files = projectFiles({
    name: packageName(basename(dir)),
    agentId: agent.id,
    webhookSecret: agent.webhook_secret,
    gateway: conn.gateway,
    port,
  })
  for (const [rel, text] of Object.entries(files)) {
    const file = join(dir, rel)
    mkdirSync(dirname(file), { recursive: true })
    // The .env holds the webhook secret: readable by its owner only.
    writeFileSync(file, text, rel === '.env' ? { mode: 0o600 } : {})
  }
  out(
    `created ${dir} for agent ${agent.id}\n\nnext:\n  cd ${dir}\n  npm install && npm start\n  npx voxgate tunnel   (in that folder, another terminal)\n`,
  )
  return 0
}

/** A port number 1-65535 or a usage error. */
export function parsePort(raw: string): number {
  const n = Number(raw)
  if (!/^\d+$/.test(raw) || n < 1 || n > 65_535) throw new CliError(`--port must be a number from 1 to 65535, not "${raw}"`, 2)
  return n
}

/** npm's rules: lower case, URL-safe, at most 214 characters. */
function packageName(folder: string): string {
  const n = folder
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+/, '')
    .slice(0, 214)
  return n === '' ? 'voxgate-agent' : n
}
