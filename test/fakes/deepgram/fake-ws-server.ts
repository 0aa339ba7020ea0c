// Generic scriptable WebSocket vendor fake used by the deepgram, assemblyai and elevenlabs fakes.
// (It lives here because those three folders are the fakes' only homes; move it to test/fakes/shared/ freely.)
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import { type WebSocket, WebSocketServer } from 'ws'

/** One frame the fake received from the client, in arrival order. */
export type RecordedFrame = { kind: 'text'; text: string; json: unknown; at: number } | { kind: 'binary'; data: Buffer; at: number }

/** One upgrade request, accepted or not. */
export interface UpgradeRecord {
  url: string
  path: string
  query: URLSearchParams
  headers: IncomingHttpHeaders
  /** 101 when accepted, otherwise the HTTP status the fake answered. */
  status: number
}

/** Verdict of a fake on an upgrade: accept, or refuse with an HTTP status. */
export type UpgradeVerdict = { accept: true } | { accept: false; status: number; body: string }

/** A client connection as the fake sees it: recorded frames, and ways to talk back or misbehave. */
export class FakeConnection {
  readonly frames: RecordedFrame[] = []
  /** Binary bytes received so far (what `audio.length` would say, without concatenating every frame). */
  audioBytes = 0
  closeInfo: { code: number; reason: string } | undefined
  readonly closed: Promise<{ code: number; reason: string }>
  readonly #listeners = new Set<() => void>()

  constructor(
    readonly socket: WebSocket,
    readonly request: UpgradeRecord,
  ) {
    this.closed = new Promise((resolve) => {
      socket.on('close', (code, reason) => {
        this.closeInfo = { code, reason: reason.toString() }
        resolve(this.closeInfo)
        this.#notify()
      })
    })
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        this.frames.push({ kind: 'binary', data: Buffer.from(data), at: Date.now() })
        this.audioBytes += data.length
      } else {
        const text = data.toString('utf8')
        this.frames.push({ kind: 'text', text, json: safeJson(text), at: Date.now() })
      }
      this.#notify()
    })
  }

  /**
   * Binary bytes [from, to) of the audio received, a copy: only the frames that overlap, so a vendor fake that
   * looks at the last utterance does not copy the whole call each time (the benchmark's world runs 300 of them).
   */
  audioBetween(from: number, to: number): Buffer {
    const parts: Buffer[] = []
    let at = 0
    for (const frame of this.frames) {
      if (frame.kind !== 'binary') continue
      const end = at + frame.data.length
      if (end > from && at < to) parts.push(frame.data.subarray(Math.max(0, from - at), Math.min(frame.data.length, to - at)))
      at = end
      if (at >= to) break
    }
    return Buffer.concat(parts)
  }

  /** Every binary byte received, concatenated. */
  get audio(): Buffer {
    return this.audioBetween(0, this.audioBytes)
  }

  /** Sizes of the binary frames received. */
  get binarySizes(): number[] {
    return this.frames.flatMap((frame) => (frame.kind === 'binary' ? [frame.data.length] : []))
  }

  /** Parsed JSON of every text frame received. */
  get messages(): Array<Record<string, unknown>> {
    return this.frames.flatMap((frame) => (frame.kind === 'text' && isRecord(frame.json) ? [frame.json] : []))
  }

  /** Send a JSON message (objects) or a raw text frame (strings). */
  send(message: object | string): void {
    if (this.socket.readyState !== this.socket.OPEN) return
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message))
  }

  /** Close with a code and reason, like a vendor ending the session. */
  close(code = 1000, reason = ''): void {
    this.socket.close(code, reason)
  }

  /** Drop the TCP connection without a close frame (network failure, vendor crash). */
  terminate(): void {
    this.socket.terminate()
  }

  /** Resolve once `predicate` holds (checked after every frame and on close); reject after `timeoutMs`. */
  waitFor(predicate: () => boolean, timeoutMs = 3000, what = 'condition'): Promise<void> {
    if (predicate()) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate()) return
        cleanup()
        resolve()
      }
      const timer = setTimeout(() => {
        cleanup()
        reject(new Error(`fake: timed out waiting for ${what}`))
      }, timeoutMs)
      const cleanup = () => {
        clearTimeout(timer)
        this.#listeners.delete(check)
      }
      this.#listeners.add(check)
    })
  }

  /** Resolve once at least `bytes` of binary audio arrived. */
  waitForAudioBytes(bytes: number, timeoutMs?: number): Promise<void> {
    return this.waitFor(() => this.audioBytes >= bytes, timeoutMs, `${bytes} audio bytes`)
  }

  /** Resolve with the first JSON message matching `predicate` (already received or future). */
  async waitForMessage(predicate: (message: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>> {
    await this.waitFor(() => this.messages.some(predicate), timeoutMs, 'a matching message')
    return this.messages.find(predicate) as Record<string, unknown>
  }

  /** Let subclasses wake waiters after changing their own state. */
  protected notify(): void {
    this.#notify()
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener()
  }
}

/** A running fake: its base URL, what it received, and shutdown. */
export interface FakeWsServer<C extends FakeConnection> {
  /** `ws://127.0.0.1:PORT`, to use as the vendor endpoint URL. */
  url: string
  port: number
  connections: C[]
  upgrades: UpgradeRecord[]
  /** Resolve with connection number `index` (0-based) once it exists. */
  connection(index: number, timeoutMs?: number): Promise<C>
  close(): Promise<void>
}

/** Start a fake on 127.0.0.1:0 that vets each upgrade with `verify` and wraps accepted sockets with `wrap`. */
export async function startFakeWsServer<C extends FakeConnection>(options: {
  verify: (request: IncomingMessage, url: URL) => UpgradeVerdict
  wrap: (socket: WebSocket, upgrade: UpgradeRecord) => C
}): Promise<FakeWsServer<C>> {
  const connections: C[] = []
  const upgrades: UpgradeRecord[] = []
  const waiters = new Set<() => void>()
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false })
  const http = createServer((_req, res) => res.writeHead(426).end('upgrade required'))

  http.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? '/', 'ws://127.0.0.1')
    const verdict = options.verify(request, url)
    const record: UpgradeRecord = {
      url: request.url ?? '/',
      path: url.pathname,
      query: url.searchParams,
      headers: request.headers,
      status: verdict.accept ? 101 : verdict.status,
    }
    upgrades.push(record)
    if (!verdict.accept) {
      const body = Buffer.from(verdict.body)
      socket.end(
        `HTTP/1.1 ${verdict.status} ${statusText(verdict.status)}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${verdict.body}`,
      )
      return
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      connections.push(options.wrap(ws, record))
      for (const waiter of [...waiters]) waiter()
    })
  })

  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const { port } = http.address() as AddressInfo

  return {
    url: `ws://127.0.0.1:${port}`,
    port,
    connections,
    upgrades,
    connection(index, timeoutMs = 3000) {
      const existing = connections[index]
      if (existing) return Promise.resolve(existing)
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = connections[index]
          if (!found) return
          clearTimeout(timer)
          waiters.delete(check)
          resolve(found)
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`fake: connection #${index} never arrived`))
        }, timeoutMs)
        waiters.add(check)
      })
    },
    async close() {
      for (const client of wss.clients) client.terminate()
      await new Promise<void>((resolve) => wss.close(() => resolve()))
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    },
  }
}

function statusText(status: number): string {
  return { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' }[status] ?? 'Error'
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
