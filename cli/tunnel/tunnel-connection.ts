import WebSocket from 'ws'
import { AGENT_NOT_OWNED, CliError } from '../common/cli-errors.js'
import {
  TUNNEL_MAX_FRAME_BYTES,
  decodeGatewayMessage,
  encodeTunnelMessage,
  type ClientMessage,
  type GatewayMessage,
} from '../../gateway/tunnels/tunnel-codec.js'

/** The gateway's first message on a tunnel. */
export type ReadyMessage = Extract<GatewayMessage, { type: 'tunnel.ready' }>

/** How one connection ended. */
export type ConnectionEnd =
  /** The gateway confirmed the `close` this side sent: the tunnel is gone. */
  | { kind: 'closed'; restored: boolean; webhookUrl: string | null }
  /** Nothing to retry: a refused key, an agent not owned, a bad flag. */
  | { kind: 'fatal'; error: CliError }
  /** Worth another try: the gateway was unreachable, restarting, or the connection dropped. */
  | { kind: 'lost'; why: string; opened: boolean }

/** How often the CLI pings the gateway; no pong by the next ping means the network is gone. */
const PING_INTERVAL_MS = 15_000
/** How long the opening handshake may take. */
const HANDSHAKE_TIMEOUT_MS = 10_000

/** What to do with a refused upgrade: a fatal error, or undefined when it is worth retrying. */
export function refusalError(
  status: number,
  body: { error?: string; code?: string },
  agent: string,
  gateway: string,
): CliError | undefined {
  if (status >= 500 || status === 408) return undefined
  const code = body.code
  if (status === 401 || status === 403 || code === 'invalid_api_key' || code === 'missing_api_key') {
    return new CliError(`the gateway refused the API key: ${body.error ?? 'no reason given'} (HTTP ${status}); run \`voxgate login\` again`)
  }
  if (status === 404 && (code === 'agent_not_found' || code === undefined)) return new CliError(`${AGENT_NOT_OWNED} (agent ${agent})`)
  if (status === 404) return new CliError(`this gateway (${gateway}) has no tunnel endpoint: ${body.error ?? ''}`)
  return new CliError(`the gateway refused the tunnel: ${body.error ?? 'no reason given'} (HTTP ${status}${code ? `, ${code}` : ''})`)
}

/**
 * One WebSocket connection of `voxgate tunnel` to the gateway. `ended` resolves once, with how it ended; a
 * refusal before the upgrade is sorted into fatal (retrying cannot help) or lost (it may).
 */
export class TunnelConnection {
  readonly ended: Promise<ConnectionEnd>
  /** True once `tunnel.ready` came; false when the connection ended first. */
  readonly ready: Promise<boolean>
  readonly #ws: WebSocket
  #onReady: (ok: boolean) => void = () => undefined
  #opened = false
  #end: (e: ConnectionEnd) => void = () => undefined

  constructor(
    url: URL,
    apiKey: string,
    readonly ctx: { agent: string; gateway: string },
    onReady: (m: ReadyMessage) => void,
    onMessage: (m: GatewayMessage) => void,
  ) {
    let settled = false
    this.ready = new Promise<boolean>((resolve) => (this.#onReady = resolve))
    this.ended = new Promise<ConnectionEnd>((resolve) => {
      this.#end = (e) => {
        if (settled) return
        settled = true
        clearInterval(ping)
        this.#onReady(false)
        resolve(e)
      }
    })
    const ws = new WebSocket(url, {
      headers: { authorization: `Bearer ${apiKey}` },
      maxPayload: TUNNEL_MAX_FRAME_BYTES,
      perMessageDeflate: false,
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    })
    this.#ws = ws
    let alive = true
    const ping = setInterval(() => {
      if (!this.#opened) return
      if (!alive) {
        ws.terminate()
        this.#end({ kind: 'lost', why: `no answer from the gateway for ${(2 * PING_INTERVAL_MS) / 1000} s`, opened: true })
        return
      }
      alive = false
      ws.ping()
    }, PING_INTERVAL_MS)
    ping.unref()
    ws.on('pong', () => (alive = true))
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
        const status = res.statusCode ?? 0
        const fatal = refusalError(status, body, ctx.agent, ctx.gateway)
        this.#end(
          fatal !== undefined
            ? { kind: 'fatal', error: fatal }
            : { kind: 'lost', why: `the gateway answered HTTP ${status}${body.error ? ` (${body.error})` : ''}`, opened: false },
        )
        ws.terminate()
      })
      res.on('error', () => this.#end({ kind: 'lost', why: `the gateway answered HTTP ${res.statusCode}`, opened: false }))
    })
    ws.on('error', (e) => {
      this.#end({ kind: 'lost', why: `cannot reach the gateway at ${ctx.gateway}: ${e.message}`, opened: this.#opened })
    })
    ws.on('message', (data) => {
      const m = decodeGatewayMessage(data.toString())
      if (m === undefined) return
      if (m.type === 'tunnel.ready') {
        this.#opened = true
        this.#onReady(true)
        onReady(m)
        return
      }
      if (m.type === 'tunnel.closed') {
        this.#end({ kind: 'closed', restored: m.restored, webhookUrl: m.webhook_url })
        ws.close()
        return
      }
      onMessage(m)
    })
    ws.on('close', (code, reason) => {
      const text = reason.length > 0 ? ` ${reason.toString()}` : ''
      this.#end({ kind: 'lost', why: `the connection closed (${code}${text})`, opened: this.#opened })
    })
  }

  /** The tunnel is open (`tunnel.ready` came). */
  get open(): boolean {
    return this.#opened && this.#ws.readyState === WebSocket.OPEN
  }

  send(m: ClientMessage): void {
    if (this.#ws.readyState === WebSocket.OPEN) this.#ws.send(encodeTunnelMessage(m))
  }

  /** Asks the gateway to close the tunnel and restore the previous webhook URL (`ended` says how it went). */
  requestClose(): void {
    this.send({ type: 'close' })
  }

  terminate(why = 'stopped'): void {
    this.#ws.terminate()
    this.#end({ kind: 'lost', why, opened: this.#opened })
  }
}
