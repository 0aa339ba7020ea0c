import type { WebSocket } from 'ws'
import {
  CANCEL_REASONS,
  decodeClientMessage,
  encodeTunnelMessage,
  type CancelReason,
  type GatewayMessage,
  type HeaderPairs,
} from './tunnel-codec.js'

/** Most requests one tunnel carries at once; more get 503 (a local server that never answers cannot pile them up). */
export const MAX_IN_FLIGHT = 32
/** Largest response body relayed for one request. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024

/** A webhook request to replay on the developer's machine. */
export interface RelayRequest {
  method: string
  /** Path below the tunnel address, query included (`/api/agent?x=1`). */
  path: string
  headers: HeaderPairs
  body: Buffer
  /** When the gateway's webhook client sent it (epoch ms), when it said so. */
  sentAt?: number | undefined
}

/** Where a relayed response goes: the HTTP response on this replica, or the relay back to another one. */
export interface ResponseSink {
  start(status: number, headers: HeaderPairs): void
  body(chunk: Buffer): void
  end(): void
  /** The request failed before or during the response; `code` is an error registry code. */
  fail(code: 'tunnel_busy' | 'tunnel_local_error' | 'tunnel_unavailable' | 'payload_too_large', message: string): void
}

interface Pending {
  sink: ResponseSink
  started: boolean
  bytes: number
  done: () => void
}

/** The agent step's deadlines for the requests the tunnel carries (its `agent.webhook` options). */
export interface WebhookDeadlines {
  firstByteMs: number
  totalMs: number
}

/**
 * How close to a deadline a cancel counts as that deadline's: measured from the request's send time (or its
 * arrival here, when the sender did not say), so what is left is the cancel's own transit, clock skew between
 * replicas, and timers firing a little early.
 */
export const DEADLINE_SLACK_MS = 250

/** Why a request was cancelled, from the abort's own reason when it is one, else from the deadlines. */
export function cancelReason(
  abortReason: unknown,
  elapsedMs: number,
  bodyBytes: number,
  deadlines: WebhookDeadlines | undefined,
): { reason: CancelReason; detail?: string } {
  if (typeof abortReason === 'string' && (CANCEL_REASONS as readonly string[]).includes(abortReason) && abortReason !== 'caller_gone') {
    return { reason: abortReason as CancelReason }
  }
  if (deadlines !== undefined) {
    if (elapsedMs >= deadlines.totalMs - DEADLINE_SLACK_MS) {
      return { reason: 'timeout', detail: `the reply took longer than timeout_ms (${deadlines.totalMs} ms)` }
    }
    if (bodyBytes === 0 && elapsedMs >= deadlines.firstByteMs - DEADLINE_SLACK_MS) {
      return { reason: 'timeout', detail: `no byte of the reply within time_to_first_byte_ms (${deadlines.firstByteMs} ms)` }
    }
  }
  return { reason: 'caller_gone' }
}

/**
 * One `voxgate tunnel` connected to this replica: its WebSocket and the requests in flight on it. Responses are
 * handed to each request's sink as their frames arrive, so an SSE reply streams event by event.
 */
export class LocalTunnel {
  readonly #pending = new Map<string, Pending>()
  #seq = 0
  #closed = false

  constructor(
    readonly id: string,
    readonly agentId: string,
    readonly ws: WebSocket,
    /** Called for a `close` frame (the CLI stops). */
    readonly onCloseRequest: () => void,
    /** The agent step's deadlines, to tell a timeout from a caller that went away. */
    readonly deadlines?: WebhookDeadlines,
  ) {
    ws.on('message', (data, isBinary) => {
      if (isBinary) return this.ws.close(1003, 'text frames only')
      this.#onFrame(data.toString())
    })
  }

  get inFlight(): number {
    return this.#pending.size
  }

  /** Sends a gateway message (dropped once the socket closed). */
  send(m: GatewayMessage): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(encodeTunnelMessage(m))
  }

  /** Replays `req` on the developer's machine; resolves when the response ended or failed. */
  forward(req: RelayRequest, sink: ResponseSink, signal?: AbortSignal): Promise<void> {
    if (this.#closed) {
      sink.fail('tunnel_unavailable', 'the tunnel closed')
      return Promise.resolve()
    }
    if (this.#pending.size >= MAX_IN_FLIGHT) {
      sink.fail('tunnel_busy', `the tunnel has ${MAX_IN_FLIGHT} requests in flight`)
      return Promise.resolve()
    }
    this.#seq += 1
    const id = String(this.#seq)
    // The agent step's deadlines run from when it sent the request, which may be a while before it got here.
    const sentAt = req.sentAt !== undefined && req.sentAt <= Date.now() ? req.sentAt : Date.now()
    return new Promise<void>((resolve) => {
      const pending: Pending = {
        sink,
        started: false,
        bytes: 0,
        done: () => {
          signal?.removeEventListener('abort', onAbort)
          resolve()
        },
      }
      const onAbort = () => {
        if (!this.#pending.delete(id)) return
        const why = cancelReason(signal?.reason, Date.now() - sentAt, pending.bytes, this.deadlines)
        this.send({ type: 'request.cancel', id, ...why })
        resolve()
      }
      this.#pending.set(id, pending)
      signal?.addEventListener('abort', onAbort, { once: true })
      this.send({ type: 'request', id, method: req.method, path: req.path, headers: req.headers, body: req.body.toString('base64') })
    })
  }

  #finish(id: string, p: Pending): void {
    this.#pending.delete(id)
    p.done()
  }

  #onFrame(text: string): void {
    const d = decodeClientMessage(text)
    if (!d.ok) {
      this.ws.close(1008, `bad frame: ${d.reason}`.slice(0, 120))
      return
    }
    const m = d.message
    if (m.type === 'close') {
      this.onCloseRequest()
      return
    }
    const p = this.#pending.get(m.id)
    if (p === undefined) return // cancelled meanwhile
    switch (m.type) {
      case 'response.start':
        if (p.started) return
        p.started = true
        p.sink.start(m.status, m.headers)
        return
      case 'response.body': {
        const chunk = Buffer.from(m.data, 'base64')
        p.bytes += chunk.length
        if (!p.started || p.bytes > MAX_RESPONSE_BYTES) {
          p.sink.fail('tunnel_local_error', p.started ? 'the local response is too large' : 'body before response.start')
          this.send({ type: 'request.cancel', id: m.id })
          this.#finish(m.id, p)
          return
        }
        p.sink.body(chunk)
        return
      }
      case 'response.end':
        if (p.started) p.sink.end()
        else p.sink.fail('tunnel_local_error', 'the local server sent no response')
        this.#finish(m.id, p)
        return
      case 'response.error':
        p.sink.fail('tunnel_local_error', m.message)
        this.#finish(m.id, p)
        return
    }
  }

  /** Fails what is in flight; idempotent. `reason`: also tell the CLI why each request is dropped. */
  closed(reason?: CancelReason): void {
    if (this.#closed) return
    this.#closed = true
    for (const [id, p] of this.#pending) {
      if (reason !== undefined) this.send({ type: 'request.cancel', id, reason })
      p.sink.fail('tunnel_unavailable', 'the tunnel closed')
      this.#finish(id, p)
    }
  }
}
