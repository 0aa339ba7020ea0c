import { parseCommand, stringFlag } from '../common/args.js'
import { CliError } from '../common/cli-errors.js'
import { resolveConnection } from '../common/gateway-client.js'
import { resolveAgentId } from '../common/agent-id.js'
import type { GatewayMessage } from '../../gateway/tunnels/tunnel-codec.js'
import { LocalForwarder, type Exchange } from './local-forwarder.js'
import { requestEndedLine, requestStartedLine, tailLine } from './exchange-log.js'
import { resolveLocalPort } from './local-port.js'
import { Backoff, retryMaxMs } from './backoff.js'
import { TunnelConnection, type ConnectionEnd, type ReadyMessage } from './tunnel-connection.js'

export const TUNNEL_USAGE = `usage: voxgate tunnel [--agent-id=<id>] [--path=/api/agent] [--port=<number>] [--tail] [--gateway <url>] [--api-key <key>]

Runs your local project behind the gateway: the agent's webhook URL is set to a tunnel address of the gateway
(PUBLIC_URL/tunnel/<id><path>) and every webhook request is relayed to http://localhost:<port><path>, the reply
streamed back as it is written. No third-party tunnel service is involved.

  --agent-id <id>   the agent; else VOXGATE_AGENT_ID, else a .env entry ending in VOXGATE_AGENT_ID in this folder
  --path <path>     the local path webhooks go to (default /api/agent)
  --port <number>   the local port; else the PORT entry of .env in this folder (voxgate init writes it), else 3000
  --tail            print each webhook request when it starts and when it ends (status, time, size; a timeout
                    is named as one), and the agent's sessions as they start and end
  --gateway <url>   gateway URL (default: VOXGATE_GATEWAY, the login's, http://localhost:8080)
  --api-key <key>   organization API key (default: VOXGATE_API_KEY, the key stored by voxgate login)

Stopping and reconnecting:
  Ctrl-C (SIGINT) or SIGTERM closes the tunnel and restores the previous webhook URL; exit code 0.
  When the gateway restarts or the network drops, the tunnel reconnects by itself (waits of 0.5 s doubling to
  10 s, one line per attempt) and gets the same address back; meanwhile the agent's webhook stays pointed at it.
  If it does not come back, the gateway restores the previous webhook URL when the tunnel's lease runs out (~15 s);
  reconnecting after that (a laptop that slept) opens a new tunnel at a new address, printed when it is ready.
  Retried: the gateway unreachable, connection refused or closed, HTTP 5xx (a replica shutting down).
  Exit 1, no retry: API key refused, agent not found or not owned by your organization ("Failed to retrieve
  Agent information"), another tunnel already open for the agent, the organization's tunnel limit, a tunnel
  address the gateway does not accept. Exit 2: bad flags, or an invalid --port or .env PORT.
`

/** How long Ctrl-C waits for the gateway to confirm it restored the previous webhook URL. */
const CLOSE_WAIT_MS = 5_000
/** Ctrl-C while reconnecting: how long to try reaching the gateway once more to restore the webhook. */
const AWAY_CLOSE_WAIT_MS = 3_000

function clock(): string {
  return new Date().toISOString().slice(11, 23)
}

/** A wait that does not hold the process open (a connection does, while it matters). */
function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref())
}

/** The wait before reconnecting: it holds the process open, as nothing else does then. */
function backoffWait(ms: number): Promise<'go'> {
  return new Promise((r) => setTimeout(() => r('go'), ms))
}

/** SIGINT/SIGTERM (or the caller's signal): the first stops gracefully, the second at once. */
class Stopper {
  readonly stopped: Promise<'stop'>
  readonly forced: Promise<'forced'>
  count = 0
  #onStop: () => void = () => undefined
  #onForce: () => void = () => undefined
  readonly #handler = () => {
    this.count += 1
    if (this.count === 1) this.#onStop()
    else this.#onForce()
  }

  constructor(signal: AbortSignal | undefined) {
    this.stopped = new Promise((r) => (this.#onStop = () => r('stop')))
    this.forced = new Promise((r) => (this.#onForce = () => r('forced')))
    process.on('SIGINT', this.#handler)
    process.on('SIGTERM', this.#handler)
    signal?.addEventListener('abort', this.#handler, { once: true })
  }

  dispose(): void {
    process.off('SIGINT', this.#handler)
    process.off('SIGTERM', this.#handler)
  }
}

/**
 * `voxgate tunnel`: runs until interrupted (exit 0), reconnecting whenever the connection is lost; a refusal that
 * retrying cannot fix is a CliError (exit 1, or 2 for usage).
 */
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
  const cwd = opts.cwd ?? process.cwd()
  const local = resolveLocalPort(stringFlag(p, 'port'), cwd)
  const path = stringFlag(p, 'path') ?? '/api/agent'
  if (!path.startsWith('/')) throw new CliError('--path must start with /', 2)
  const tail = p.values.tail === true
  const conn = resolveConnection(p, env)
  const { agentId, source } = resolveAgentId(stringFlag(p, 'agent-id'), env, cwd)

  let current: TunnelConnection | undefined
  const onEnd = (e: Exchange) => {
    const benign = e.cancel?.reason === 'caller_gone'
    if (tail) out(`${requestEndedLine(e)}\n`)
    else if (e.error !== undefined || (e.cancel !== undefined && !benign)) out(`${requestStartedLine(e)}\n${requestEndedLine(e)}\n`)
    if (e.error !== undefined) {
      out(`  the gateway answered the webhook with 502; the call goes on (is your server running on port ${local.port}?)\n`)
    }
  }
  const forwarder = new LocalForwarder(
    local.port,
    (m) => current?.send(m),
    onEnd,
    'localhost',
    (e) => {
      if (tail) out(`${requestStartedLine(e)}\n`)
    },
  )

  // Session events already printed: a reconnected tunnel's tail starts over from the tunnel's creation.
  const printed = new Set<string>()
  const onMessage = (m: GatewayMessage) => {
    switch (m.type) {
      case 'request':
        forwarder.handle(m)
        return
      case 'request.cancel':
        forwarder.cancel(m.id, { reason: m.reason, detail: m.detail })
        return
      case 'tail': {
        const key = `${m.event} ${m.session_id}`
        if (!tail || printed.has(key)) return
        if (printed.size > 10_000) printed.clear()
        printed.add(key)
        out(`${tailLine(m)}\n`)
        return
      }
    }
  }

  let tunnelId: string | undefined
  let firstReady = true
  const onReady = (m: ReadyMessage) => {
    const previousId = tunnelId
    tunnelId = m.tunnel_id
    if (!firstReady) {
      if (m.tunnel_id === previousId) {
        out(`${clock()} tunnel back (${m.resumed === true ? 'the same tunnel' : 'the same address, pointed at again'}): ${m.webhook_url}\n`)
        return
      }
      // The old tunnel's lease ran out while this side was away (a laptop asleep): the gateway never hands an old
      // address out again, so this is a new tunnel, and anything that copied the old address needs this one.
      out(
        `${clock()} tunnel back at a NEW address (the old one expired while disconnected): ${m.webhook_url}\n` +
          `  the agent's webhook URL now points there; update anything that used the old address\n`,
      )
      return
    }
    firstReady = false
    out(
      `tunnel open for agent ${m.agent_id} (from ${source})\n` +
        `  webhook URL: ${m.webhook_url}\n` +
        `  forwarding to: ${forwarder.url(path)} (port from ${local.source})\n` +
        `  previous webhook URL (restored when the tunnel stops): ${m.previous_webhook_url ?? 'none (the built-in agent step)'}\n` +
        `Ctrl-C to stop.${tail ? ' Live sessions and webhook requests follow.' : ' --tail prints webhook requests and sessions live.'}\n`,
    )
  }

  const connect = () => {
    const url = new URL(`${conn.gateway.replace(/^http/, 'ws')}/v1/tunnels`)
    url.searchParams.set('agent_id', agentId)
    url.searchParams.set('path', path)
    if (tail) url.searchParams.set('tail', '1')
    if (tunnelId !== undefined) url.searchParams.set('resume', tunnelId)
    current = new TunnelConnection(url, conn.apiKey, { agent: `${agentId}, from ${source}`, gateway: conn.gateway }, onReady, onMessage)
    return current
  }

  const stopper = new Stopper(opts.signal)
  const backoff = new Backoff(retryMaxMs(env))
  /** Closes the tunnel on an open connection; true when the gateway confirmed. */
  const closeOn = async (c: TunnelConnection, waitMs: number): Promise<boolean> => {
    c.requestClose()
    const end = await Promise.race([c.ended, sleep(waitMs).then(() => undefined), stopper.forced.then(() => undefined)])
    if (end?.kind !== 'closed') {
      c.terminate()
      return false
    }
    out(
      end.restored
        ? `tunnel closed; webhook URL restored to ${end.webhookUrl ?? 'none (the built-in agent step)'}\n`
        : 'tunnel closed; the agent had been changed meanwhile, so its webhook URL was left as it is\n',
    )
    return true
  }
  /** Ctrl-C while not connected: one short try to reach the gateway and restore the webhook URL. */
  const stopWhileAway = async (): Promise<number> => {
    if (tunnelId === undefined) return 0
    out('stopping: reaching the gateway to restore the previous webhook URL...\n')
    const c = connect()
    const ready = await Promise.race([c.ready, sleep(AWAY_CLOSE_WAIT_MS).then(() => false), stopper.forced.then(() => false)])
    if (ready && (await closeOn(c, CLOSE_WAIT_MS))) return 0
    c.terminate()
    out("the gateway could not be reached; it restores the previous webhook URL when the tunnel's lease runs out\n")
    return 0
  }

  try {
    for (;;) {
      const c = connect()
      const end: ConnectionEnd | 'stop' = await Promise.race([c.ended, stopper.stopped])
      if (end === 'stop') {
        if (!c.open) {
          c.terminate()
          forwarder.dropAll()
          return await stopWhileAway()
        }
        out('stopping: restoring the previous webhook URL...\n')
        if (!(await closeOn(c, CLOSE_WAIT_MS))) {
          out('the gateway did not confirm in time; it restores the previous webhook URL when the lease runs out\n')
        }
        return stopper.count > 1 ? 1 : 0
      }
      forwarder.dropAll()
      if (end.kind === 'fatal') throw end.error
      if (end.kind === 'closed') return 0
      if (end.opened) backoff.reset()
      const wait = backoff.next()
      const what = end.opened ? 'tunnel connection lost' : tunnelId === undefined ? 'cannot open the tunnel' : 'cannot reconnect'
      out(`${clock()} ${what}: ${end.why}; retrying in ${(wait / 1000).toFixed(1)} s (attempt ${backoff.attempt})\n`)
      if ((await Promise.race([backoffWait(wait), stopper.stopped])) === 'stop') return await stopWhileAway()
    }
  } finally {
    stopper.dispose()
    forwarder.close()
  }
}
