import { Agent, request } from 'node:http'
import {
  TUNNEL_BODY_SLICE_BYTES,
  endToEndHeaders,
  type CancelReason,
  type ClientMessage,
  type GatewayMessage,
} from '../../gateway/tunnels/tunnel-codec.js'

type RequestMessage = Extract<GatewayMessage, { type: 'request' }>

/** Why a request ended before its response did. */
export interface Cancel {
  /** The gateway's reason (undefined: a gateway too old to say); `connection_lost`: the tunnel's socket closed. */
  reason: CancelReason | 'connection_lost' | undefined
  detail?: string | undefined
}

/** What one relayed exchange looked like, for the log and `--tail`. */
export interface Exchange {
  method: string
  path: string
  requestBody: Buffer
  status?: number
  contentType?: string
  /** Response bytes, kept up to 64 KiB for --tail to show what was said. */
  responseHead: Buffer
  /** Every response byte relayed. */
  bytes: number
  ms: number
  /** The local server failed (did not answer, broke off). */
  error?: string
  /** The gateway stopped waiting, or the tunnel's connection was lost. */
  cancel?: Cancel
}

const KEEP_RESPONSE_BYTES = 64 * 1024

/**
 * Replays the gateway's requests on `localhost:<port>` and streams each response back frame by frame as the
 * local server writes it (an SSE reply reaches the caller event by event). Connections are kept alive between
 * requests, so a turn does not pay for a new TCP connection.
 */
export class LocalForwarder {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 64 })
  readonly #inFlight = new Map<string, (cancel: Cancel) => void>()

  constructor(
    readonly port: number,
    readonly send: (m: ClientMessage) => void,
    readonly onExchange: (e: Exchange) => void,
    readonly host = 'localhost',
    /** A request arrived and is being replayed (its response not yet started). */
    readonly onStart: (e: Exchange) => void = () => undefined,
  ) {}

  /** Starts replaying one request. */
  handle(m: RequestMessage): void {
    const started = performance.now()
    const body = Buffer.from(m.body, 'base64')
    const exchange: Exchange = { method: m.method, path: m.path, requestBody: body, responseHead: Buffer.alloc(0), bytes: 0, ms: 0 }
    let done = false
    const finish = (error?: string, cancel?: Cancel) => {
      if (done) return
      done = true
      this.#inFlight.delete(m.id)
      exchange.ms = performance.now() - started
      if (error !== undefined) exchange.error = error
      if (cancel !== undefined) exchange.cancel = cancel
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
        exchange.bytes += chunk.length
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
    this.#inFlight.set(m.id, (cancel) => {
      req.destroy()
      finish(undefined, cancel)
    })
    this.onStart(exchange)
    req.end(body)
  }

  /** The gateway stopped waiting (the caller went away, a timeout, a shutdown): stop that local request. */
  cancel(id: string, cancel: Cancel): void {
    this.#inFlight.get(id)?.(cancel)
  }

  /** The tunnel's connection was lost: its requests can no longer be answered. */
  dropAll(): void {
    for (const stop of [...this.#inFlight.values()]) stop({ reason: 'connection_lost' })
  }

  url(path: string): string {
    return `http://${this.host}:${this.port}${path}`
  }

  close(): void {
    this.dropAll()
    this.#agent.destroy()
  }
}
