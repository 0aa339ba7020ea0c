import { mkdirSync, writeFileSync } from 'node:fs'
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { parseCommand, stringFlag } from '../common/args.js'
import { AGENT_NOT_OWNED, CliError } from '../common/cli-errors.js'
import { api, errorText, resolveConnection } from '../common/gateway-client.js'
import { cliDependencySpec, findCliPackage } from './cli-package.js'
import { projectFiles } from './project-files.js'
import { prepareTarget } from './target-folder.js'

export const INIT_USAGE = `usage: voxgate init [folder] [--agent-id <id>] [--port <number>] [--gateway <url>] [--api-key <key>]

Creates an example agent backend in a new folder (default ./voxgate-agent): package.json, server.js answering
POST /api/agent (checks service-signature; a welcome for session.start, an SSE echo for each message), agent.js
(where your logic or LLM call goes), a test, a README and a .env with the agent id, its webhook secret and PORT.
Without --agent-id a new agent is created. The folder must be new or empty; it is created and checked before the
gateway is asked for anything. Prints a link to talk to the agent in the browser.
Then: cd <folder> && npm install && npm start, and \`npx voxgate tunnel\` in that folder (another terminal).

  --agent-id <id>    link an existing agent of your organization instead of creating one
  --port <number>    the port the project listens on, written to its .env as PORT (default 3000)
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
  const conn = resolveConnection(p, env)
  const agentIdFlag = stringFlag(p, 'agent-id')
  const cli = findCliPackage()
  if (cli === undefined) throw new CliError('cannot find the voxgate package this command runs from')

  // The folder first: a path that cannot hold the project fails before an agent exists.
  const target = prepareTarget(dir)
  let agent: { id: string; webhook_secret: string }
  try {
    agent = await readOrCreateAgent(conn, agentIdFlag, basename(dir))
  } catch (e) {
    target.rollback()
    throw e
  }
  if (agentIdFlag === undefined) out(`created agent ${agent.id}\n`)

  const files = projectFiles({
    name: packageName(basename(dir)),
    agentId: agent.id,
    webhookSecret: agent.webhook_secret,
    gateway: conn.gateway,
    port,
    cliDependency: cliDependencySpec(cli),
  })
  try {
    for (const [rel, text] of Object.entries(files)) {
      const file = join(dir, rel)
      // Subfolders (test/) of a folder proven writable above.
      mkdirSync(dirname(file), { recursive: true })
      // The .env holds the webhook secret: readable by its owner only.
      writeFileSync(file, text, rel === '.env' ? { mode: 0o600 } : {})
    }
  } catch (e) {
    target.rollback()
    const left = agentIdFlag === undefined ? `; agent ${agent.id} was created: pass --agent-id ${agent.id} to use it` : ''
    throw new CliError(`cannot write the project in ${dir}: ${(e as Error).message}${left}`)
  }

  const link = await talkLink(conn, agent.id)
  const shown = relative(process.cwd(), dir)
  const cd = shown === '' ? '.' : shown.startsWith('..') || isAbsolute(shown) ? dir : shown
  out(
    `created ${dir} for agent ${agent.id}\n\n` +
      'next:\n' +
      `  cd ${cd}\n` +
      `  npm install && npm start   (your server on http://localhost:${port}/api/agent)\n` +
      `  npx voxgate tunnel         (in that folder, another terminal: the agent's webhooks reach localhost:${port})\n\n`,
  )
  if (link.ok) {
    out(
      'Open the link to talk to the agent in the browser (type, or speak once the gateway has an STT key); while the\ntunnel runs, your server answers.\n\n' +
        `  Talk to your agent: ${link.url}\n`,
    )
  } else {
    out(`warning: no talk link (${link.reason}); the project is ready. Create one with POST /v1/agents/${agent.id}/links\n`)
  }
  return 0
}

/** The agent fields init needs. */
type AgentRecord = { id: string; webhook_secret: string }
/** Where and as whom the CLI talks to the gateway. */
type Conn = { gateway: string; apiKey: string }

async function readOrCreateAgent(conn: Conn, agentId: string | undefined, name: string): Promise<AgentRecord> {
  let agent: AgentRecord
  if (agentId !== undefined) {
    const r = await api(conn.gateway, 'GET', `/v1/agents/${encodeURIComponent(agentId)}`, { apiKey: conn.apiKey })
    if (r.status === 404) throw new CliError(AGENT_NOT_OWNED)
    if (r.status !== 200) throw new CliError(`cannot read agent ${agentId}: ${errorText(r)}`)
    agent = r.body as unknown as AgentRecord
  } else {
    const r = await api(conn.gateway, 'POST', '/v1/agents', { apiKey: conn.apiKey, body: { name } })
    if (r.status !== 201) throw new CliError(`cannot create an agent: ${errorText(r)}`)
    agent = r.body as unknown as AgentRecord
  }
  if (typeof agent.webhook_secret !== 'string') throw new CliError('the gateway did not return the agent webhook secret')
  return agent
}

/** An agent link (opens the demo page talking to this agent); a failure is reported, never fatal. */
async function talkLink(conn: Conn, agentId: string): Promise<{ ok: true; url: string } | { ok: false; reason: string }> {
  try {
    const r = await api(conn.gateway, 'POST', `/v1/agents/${encodeURIComponent(agentId)}/links`, { apiKey: conn.apiKey, body: {} })
    if (r.status === 201 && typeof r.body.url === 'string') return { ok: true, url: r.body.url }
    return { ok: false, reason: errorText(r) }
  } catch (e) {
    return { ok: false, reason: (e as Error).message }
  }
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
