import WebSocket from 'ws'
import { parseCommand, stringFlag } from '../common/args.js'
import { AGENT_NOT_OWNED, CliError } from '../common/cli-errors.js'
import { resolveConnection } from '../common/gateway-client.js'
import { resolveAgentId } from '../common/agent-id.js'
import { parsePort } from '../init/init-command.js'
import {
  TUNNEL_MAX_FRAME_BYTES,
  decodeGatewayMessage,
  encodeTunnelMessage,
  type ClientMessage,
} from '../../gateway/tunnels/tunnel-codec.js'
import { LocalForwarder } from './local-forwarder.js'
import { exchangeLines, tailLine, turnFailedLine } from './exchange-log.js'

export const TUNNEL_USAGE = `usage: voxgate tunnel [--agent-id=<id>] [--path=/api/agent] [--port=3000] [--tail] [--gateway <url>] [--api-key <key>]

Runs your local project behind the gateway: the agent's webhook URL is set to a tunnel address of the gateway
(PUBLIC_URL/tunnel/<id><path>) and every webhook request is relayed to http://localhost:<port><path>, the reply
streamed back as it is written. No third-party tunnel service is involved. When the tunnel stops (Ctrl-C), the
previous webhook URL is restored; if this process or the gateway dies, the gateway restores it within ~15 s.

  --agent-id <id>   the agent; else VOXGATE_AGENT_ID, else a .env entry ending in VOXGATE_AGENT_ID in this folder
  --path <path>     the local path webhooks go to (default /api/agent)
  --port <number>   the local port (default 3000)
  --tail            print the agent's sessions, turns and webhook exchanges as they happen
  --gateway <url>   gateway URL (default: VOXGATE_GATEWAY, the login's, http://localhost:3000)
  --api-key <key>   organization API key (default: VOXGATE_API_KEY, the key stored by voxgate login)
`

/** How long Ctrl-C waits for the gateway to confirm it restored the previous webhook URL. */
const CLOSE_WAIT_MS = 5_000

/** `voxgate tunnel`: runs until interrupted (exit 0) or the connection is lost (exit 1). */
export async function tunnelCommand(
  args: string[],
  env: NodeJS.ProcessEnv,
  out: (s: string) => void,
  opts: { cwd?: string; signal?: AbortSignal } = {},
): Promise<number> {
  const p = parseCommand(args, {
    'agent-id': { type: 'string' },
    path: { type: 'string' },
    port: { type: 'string' },
    tail: { type: 'boolean' },
    gateway: { type: 'string' },
    'api-key': { type: 'string' },
  })
  if (p.values.help === true) {
    out(TUNNEL_USAGE)
    return 0
  }
  const port = parsePort(stringFlag(p, 'port') ?? '3000')
  const path = stringFlag(p, 'path') ?? '/api/agent'
  if (!path.startsWith('/')) throw new CliError('--path must start with /', 2)
  const tail = p.values.tail === true
  const conn = resolveConnection(p, env)
  const { agentId, source } = resolveAgentId(stringFlag(p, 'agent-id'), env, opts.cwd ?? process.cwd())

  const wsUrl = new URL(`${conn.gateway.replace(/^http/, 'ws')}/v1/tunnels`)
  wsUrl.searchParams.set('agent_id', agentId)
  wsUrl.searchParams.set('path', path)
  if (tail) wsUrl.searchParams.set('tail', '1')
  const ws = new WebSocket(wsUrl, {
    headers: { authorization: `Bearer ${conn.apiKey}` },
    maxPayload: TUNNEL_MAX_FRAME_BYTES,
    perMessageDeflate: false,
  })
  const send = (m: ClientMessage) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(encodeTunnelMessage(m))
  }
  const forwarder = new LocalForwarder(port, send, (e) => {
    if (tail) for (const line of exchangeLines(e)) out(`${line}\n`)
    else if (e.error !== undefined) out(`${exchangeLines(e).join('\n')}\n`)
    if (e.error !== undefined && !e.error.startsWith('cancelled')) {
      out(`  the gateway answered the webhook with 502; the call goes on (is your server running on port ${port}?)\n`)
    }
  })

  return new Promise<number>((resolve, reject) => {
    let opened = false
    let stopping = false
    let settled = false
    const settle = (code: number | Error) => {
      if (settled) return
      settled = true
      forwarder.close()
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      if (code instanceof Error) reject(code)
      else resolve(code)
    }
    const stop = () => {
      if (stopping) return settle(1)
      stopping = true
      if (!opened) {
        ws.terminate()
        return settle(0)
      }
      out('stopping: restoring the previous webhook URL...\n')
      send({ type: 'close' })
      setTimeout(() => {
        out('the gateway did not confirm in time; it restores the previous webhook URL when its lease runs out\n')
        ws.terminate()
        settle(0)
      }, CLOSE_WAIT_MS).unref()
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
    opts.signal?.addEventListener('abort', stop, { once: true })

    ws.on('unexpected-response', (_req, res) => {
      let text = ''
      res.on('data', (c: Buffer) => (text += c.toString()))
      res.on('end', () => {
        let body: { error?: string; code?: string } = {}
        try {
          body = JSON.parse(text) as typeof body
        } catch {
          body = { error: text.slice(0, 200) }
        }
        if (res.statusCode === 404 && (body.code === 'agent_not_found' || body.code === undefined)) {
          settle(new CliError(`${AGENT_NOT_OWNED} (agent ${agentId}, from ${source})`))
        } else if (res.statusCode === 404) {
          settle(new CliError(`this gateway (${conn.gateway}) has no tunnel endpoint: ${body.error ?? ''}`))
        } else {
          settle(
            new CliError(
              `the gateway refused the tunnel: ${body.error ?? 'no reason given'} (HTTP ${res.statusCode}${body.code ? `, ${body.code}` : ''})`,
            ),
          )
        }
        ws.terminate()
      })
    })
    ws.on('error', (e) => {
      if (!opened) settle(new CliError(`cannot open a tunnel at ${conn.gateway}: ${e.message}`))
    })
    ws.on('message', (data) => {
      const m = decodeGatewayMessage(data.toString())
      if (m === undefined) return
      switch (m.type) {
        case 'tunnel.ready':
          opened = true
          out(
            `tunnel open for agent ${m.agent_id} (from ${source})\n` +
              `  webhook URL: ${m.webhook_url}\n` +
              `  forwarding to: ${forwarder.url(path)}\n` +
              `  previous webhook URL (restored when the tunnel stops): ${m.previous_webhook_url ?? 'none (the built-in agent step)'}\n` +
              `Ctrl-C to stop.${tail ? ' Live sessions, turns and webhook exchanges follow.' : ' --tail prints calls live.'}\n`,
          )
          return
        case 'request':
          forwarder.handle(m)
          return
        case 'request.cancel':
          forwarder.cancel(m.id)
          return
        case 'tail':
          if (tail) out(`${m.event === 'turn.failed' ? turnFailedLine(m) : tailLine(m)}\n`)
          return
        case 'tunnel.closed':
          out(
            m.restored
              ? `tunnel closed; webhook URL restored to ${m.webhook_url ?? 'none (the built-in agent step)'}\n`
              : 'tunnel closed; the agent had been changed meanwhile, so its webhook URL was left as it is\n',
          )
          ws.close()
          settle(0)
          return
      }
    })
    ws.on('close', (code, reason) => {
      if (stopping) return settle(0)
      if (!opened) return
      out(
        `the tunnel connection closed (${code}${reason.length > 0 ? ` ${reason.toString()}` : ''}); the gateway restores the previous webhook URL\n`,
      )
      settle(1)
    })
  })
}
