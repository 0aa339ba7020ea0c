import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { STATUS_CODES } from 'node:http'
import { WebSocketServer } from 'ws'
import type { Kysely } from 'kysely'
import type { Database } from '../store/schema.js'
import { organizationForApiKey } from '../store/api-keys.js'
import { closeTunnel, openTunnel } from '../store/tunnels.js'
import { ERRORS, type ErrorCode } from '../../core/errors.js'
import { newId } from '../../core/ids.js'
import type { Log } from '../../core/log.js'
import type { TunnelHub } from './tunnel-hub.js'
import { TUNNEL_MAX_FRAME_BYTES } from './tunnel-codec.js'
import { webhookDeadlines } from './webhook-swap.js'
import { TUNNEL_HTTP_PREFIX } from './tunnel-codec.js'

/** The tunnel WebSocket endpoint `voxgate tunnel` connects to. */
export const TUNNEL_WS_PATH = '/v1/tunnels'
export { TUNNEL_HTTP_PREFIX }
/** Tunnels one organization may have open at once. */
export const MAX_TUNNELS_PER_ORGANIZATION = 10
/** How often the gateway pings a tunnel; one that misses a pong for two intervals is closed. */
const PING_INTERVAL_MS = 15_000

function refuse(socket: Duplex, code: ErrorCode, message?: string): void {
  const { status, message: fallback } = ERRORS[code]
  const body = JSON.stringify({ error: message ?? fallback, code })
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  )
}

/** The `--path` a tunnel forwards to: absolute, no `..`, no query, at most 500 characters. */
export function tunnelPathProblem(path: string): string | undefined {
  if (!path.startsWith('/') || path.length > 500) return 'path must start with / and have at most 500 characters'
  if (/[?#\s]/.test(path) || path.split('/').includes('..')) return 'path must be a plain path (no query, no ..)'
  return undefined
}

/** What a tunnel id looks like (`resume` is checked against it before it reaches the database). */
const TUNNEL_ID = /^tun_[A-Za-z0-9_-]{1,64}$/

/**
 * `GET /v1/tunnels?agent_id=<id>&path=/api/agent[&tail=1][&resume=<tunnel_id>]` upgraded to a WebSocket,
 * authorized with the organization's API key (`Authorization: Bearer`). Before the 101 the agent's webhook URL is
 * pointed at the new tunnel (so every refusal is a plain HTTP error with the SPEC's body); then the hub carries it.
 * `resume`: a reconnecting CLI's tunnel id; it gets that tunnel back while the tunnel is inside its lease (the
 * address stays). An unknown id, another agent's or organization's, or a lease that ran out opens a new tunnel with
 * a new random id (the CLI prints the new address); every new tunnel counts against the organization's limit.
 */
export function tunnelUpgradeHandler(deps: {
  db: Kysely<Database>
  hub: TunnelHub
  publicUrl: string
  log: Log
  isDraining: () => boolean
}) {
  const wss = new WebSocketServer({ noServer: true, maxPayload: TUNNEL_MAX_FRAME_BYTES, perMessageDeflate: false })
  const swap = deps.hub.deps.swap
  return async (req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> => {
    if (deps.isDraining()) return refuse(socket, 'shutting_down')
    const key = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1]
    if (key === undefined) return refuse(socket, 'missing_api_key')
    const organizationId = await organizationForApiKey(deps.db, key)
    if (organizationId === undefined) return refuse(socket, 'invalid_api_key')
    const agentId = url.searchParams.get('agent_id') ?? ''
    if (agentId === '' || agentId.length > 200) return refuse(socket, 'invalid_agent_id', 'agent_id is required')
    const path = url.searchParams.get('path') ?? '/api/agent'
    const problem = tunnelPathProblem(path)
    if (problem !== undefined) return refuse(socket, 'validation_failed', problem)
    const resume = url.searchParams.get('resume')
    if (resume !== null && !TUNNEL_ID.test(resume)) return refuse(socket, 'validation_failed', 'resume must be a tunnel id')

    // A new tunnel's id is always ours: `resume` only takes back a tunnel of this agent still inside its lease.
    const freshId = newId('tun')
    const webhookUrl = `${deps.publicUrl.replace(/\/+$/, '')}${TUNNEL_HTTP_PREFIX}${freshId}${path}`
    const opened = await openTunnel(
      deps.db,
      {
        id: freshId,
        resume: resume ?? undefined,
        organizationId,
        agentId,
        webhookUrl,
        holder: deps.hub.holder,
        holderUrl: deps.hub.directUrl,
        leaseMs: deps.hub.leaseMs,
        maxTunnels: MAX_TUNNELS_PER_ORGANIZATION,
      },
      swap,
    )
    if (!opened.ok) {
      if (opened.reason === 'invalid_url') return refuse(socket, 'validation_failed', opened.message)
      return refuse(socket, opened.reason)
    }
    const id = opened.tunnel.id
    if (socket.destroyed) {
      // A tunnel taken back stays to its lease (the CLI tries again); a new one is closed at once.
      if (!opened.resumed) await closeTunnel(deps.db, id, swap)
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      deps.log.info(
        { tunnel_id: id, agent_id: agentId, organization_id: organizationId, resumed: opened.resumed },
        opened.resumed ? 'tunnel taken back by its CLI' : 'tunnel opened',
      )
      let alive = true
      ws.on('pong', () => (alive = true))
      const ping = setInterval(() => {
        if (!alive) return ws.terminate()
        alive = false
        ws.ping()
      }, PING_INTERVAL_MS)
      ping.unref()
      ws.on('close', () => clearInterval(ping))
      deps.hub.attach(ws, opened.tunnel, {
        tail: url.searchParams.get('tail') === '1',
        previousUrl: opened.previousUrl,
        deadlines: webhookDeadlines(opened.config, opened.tunnel.webhook_url),
        resumed: opened.resumed,
      })
    })
  }
}
