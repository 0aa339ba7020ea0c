import { Agent, request } from 'node:http'
import { TUNNEL_BODY_SLICE_BYTES, endToEndHeaders, type ClientMessage, type GatewayMessage } from '../../gateway/tunnels/tunnel-codec.js'

type RequestMessage = Extract<GatewayMessage, { type: 'request' }>

/** What one relayed exchange looked like, for the log and `--tail`. */
export interface Exchange {
  method: string
  path: string
  requestBody: Buffer
  status?: number
  contentType?: string
  /** Response bytes, kept up to 64 KiB for --tail to show what was said. */
  responseHead: Buffer
  ms: number
  error?: string
}

const KEEP_RESPONSE_BYTES = 64 * 1024

/**
 * Replays the gateway's requests on `localhost:<port>` and streams each response back frame by frame as the
 * local server writes it (an SSE reply reaches the caller event by event). Connections are kept alive between
 * requests, so a turn does not pay for a new TCP connection.
 */
export class LocalForwarder {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 64 })
  readonly #inFlight = new Map<string, () => void>()

  constructor(
    readonly port: number,
    readonly send: (m: ClientMessage) => void,
    readonly onExchange: (e: Exchange) => void,
    readonly host = 'localhost',
  ) {}

  /** Starts replaying one request. */
  handle(m: RequestMessage): void {
    const started = performance.now()
    const body = Buffer.from(m.body, 'base64')
    const exchange: Exchange = { method: m.method, path: m.path, requestBody: body, responseHead: Buffer.alloc(0), ms: 0 }
    let done = false
    const finish = (error?: string) => {
      if (done) return
      done = true
      this.#inFlight.delete(m.id)
      exchange.ms = performance.now() - started
      if (error !== undefined) exchange.error = error
      this.onExchange(exchange)
    }
    const headers: Record<string, string | string[]> = {}
    for (const [name, value] of m.headers) {
      const prev = headers[name]
      headers[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value]
    }
    headers['content-length'] = String(body.length)
    const req = request({ host: this.host, port: this.port, method: m.method, path: m.path, headers, agent: this.#agent }, (res) => {
      exchange.status = res.statusCode ?? 502
      exchange.contentType = res.headers['content-type']
      const pairs: [string, string][] = []
      for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!])
      this.send({ type: 'response.start', id: m.id, status: exchange.status, headers: endToEndHeaders(pairs) })
      res.on('data', (chunk: Buffer) => {
        if (exchange.responseHead.length < KEEP_RESPONSE_BYTES) exchange.responseHead = Buffer.concat([exchange.responseHead, chunk])
        for (let i = 0; i < chunk.length; i += TUNNEL_BODY_SLICE_BYTES) {
          this.send({ type: 'response.body', id: m.id, data: chunk.subarray(i, i + TUNNEL_BODY_SLICE_BYTES).toString('base64') })
        }
      })
      res.on('end', () => {
        this.send({ type: 'response.end', id: m.id })
        finish()
      })
      res.on('error', (e) => {
        this.send({ type: 'response.error', id: m.id, message: `the local response broke off: ${e.message}` })
        finish(e.message)
      })
    })
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (done) return
      const message = `the local server at ${this.url(m.path)} did not answer (${e.code ?? e.message})`
      this.send({ type: 'response.error', id: m.id, message })
      finish(message)
    })
    this.#inFlight.set(m.id, () => {
      req.destroy()
      finish('cancelled by the gateway (the caller went away)')
    })
    req.end(body)
  }

  /** The gateway's caller gave up (e.g. the user interrupted): stop that local request. */
  cancel(id: string): void {
    this.#inFlight.get(id)?.()
  }

  url(path: string): string {
    return `http://${this.host}:${this.port}${path}`
  }

  close(): void {
    for (const cancel of [...this.#inFlight.values()]) cancel()
    this.#agent.destroy()
  }
}
