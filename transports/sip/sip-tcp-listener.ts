/**
 * The endpoint's TCP server: each connection gets its own stream framer (RFC 3261 section 18.3), and answers go
 * back on the connection the request came on. Bounded: connections in all and per source address, bytes
 * waiting to be written to a peer that does not read, and time without a byte (an idle connection is closed).
 * A framing error closes the connection, since a stream cannot be resynchronised after one.
 */
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net'
import type { SipDecodeResult } from './sip-message-codec.js'
import { SipStreamFramer } from './sip-stream-framer.js'

/** TCP bounds. */
export interface SipTcpLimits {
  /** Connections open at once. */
  readonly maxConnections: number
  /** Connections open at once from one address. */
  readonly maxConnectionsPerAddress: number
  /** A connection with no byte either way for this long is closed. */
  readonly idleMs: number
  /** A peer that leaves this much of our output unread is cut off. */
  readonly maxWriteBufferBytes: number
}

/** The defaults: 1,024 connections, 32 per address, 120 s idle (twice a common keep-alive), 256 KiB unread. */
export const DEFAULT_TCP_LIMITS: SipTcpLimits = {
  maxConnections: 1_024,
  maxConnectionsPerAddress: 32,
  idleMs: 120_000,
  maxWriteBufferBytes: 256 * 1024,
}

/** One connection as the endpoint sees it. */
export interface SipTcpConnection {
  readonly address: string
  readonly port: number
  /** Writes bytes on this connection; false when it is gone or was cut off for not reading. */
  write(bytes: Buffer): boolean
}

/** What the listener tells the endpoint. */
export interface SipTcpEvents {
  /** A message framed (decoded or not) on a connection. A framing error never reaches here: it closes. */
  readonly onMessage: (result: SipDecodeResult, connection: SipTcpConnection) => void
  /** A connection was refused or closed for a reason worth counting. */
  readonly onRefused: (reason: 'connection_limit' | 'framing_error', address: string) => void
}

/** A listening TCP server. */
export class SipTcpListener {
  readonly #server: Server
  readonly #sockets = new Set<Socket>()
  readonly #events: SipTcpEvents
  readonly #limits: SipTcpLimits
  #closing: Promise<void> | undefined

  private constructor(server: Server, events: SipTcpEvents, limits: SipTcpLimits) {
    this.#server = server
    this.#events = events
    this.#limits = limits
  }

  /** Listens on `host:port`. */
  static async listen(
    host: string,
    port: number,
    events: SipTcpEvents,
    limits: SipTcpLimits = DEFAULT_TCP_LIMITS,
  ): Promise<SipTcpListener> {
    const perAddress = new Map<string, number>()
    const server = createServer()
    const listener = new SipTcpListener(server, events, limits)
    server.on('connection', (socket) => {
      const address = socket.remoteAddress ?? ''
      const open = perAddress.get(address) ?? 0
      if (listener.#sockets.size >= limits.maxConnections || open >= limits.maxConnectionsPerAddress) {
        events.onRefused('connection_limit', address)
        socket.destroy()
        return
      }
      perAddress.set(address, open + 1)
      listener.#sockets.add(socket)
      socket.once('close', () => {
        listener.#sockets.delete(socket)
        const left = (perAddress.get(address) ?? 1) - 1
        if (left <= 0) perAddress.delete(address)
        else perAddress.set(address, left)
      })
      listener.#serve(socket, address, events, limits)
    })
    // A listening server reports errors of accepted sockets on the sockets; this is the server's own.
    server.on('error', () => undefined)
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => {
        server.off('error', reject)
        resolve()
      })
    })
    return listener
  }

  /** The bound port. */
  get port(): number {
    return (this.#server.address() as { port: number }).port
  }

  /** Connections open now. */
  get connections(): number {
    return this.#sockets.size
  }

  /**
   * Opens a connection of ours (an outbound call over TCP): its messages reach the endpoint as an accepted
   * connection's do, with the same framing and write limits but no idle timeout (a call may be quiet for hours;
   * the caller closes it when the call ends). Null when it cannot connect within `timeoutMs`.
   */
  async connect(host: string, port: number, timeoutMs = 5_000): Promise<{ connection: SipTcpConnection; close(): void } | null> {
    if (this.#closing !== undefined || this.#sockets.size >= this.#limits.maxConnections) return null
    const socket = netConnect({ host, port })
    const connected = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs)
      socket.once('connect', () => resolve(true))
      socket.once('error', () => resolve(false))
      socket.once('connect', () => clearTimeout(timer))
    })
    if (!connected || this.#closing !== undefined) {
      socket.destroy()
      return null
    }
    this.#sockets.add(socket)
    socket.once('close', () => this.#sockets.delete(socket))
    const connection = this.#serve(socket, host, this.#events, this.#limits)
    socket.setTimeout(0)
    return { connection, close: () => socket.end() }
  }

  /** Stops listening and closes every connection. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      this.#server.close(() => resolve())
      for (const socket of this.#sockets) socket.destroy()
    })
    return this.#closing
  }

  #serve(socket: Socket, address: string, events: SipTcpEvents, limits: SipTcpLimits): SipTcpConnection {
    const framer = new SipStreamFramer()
    const connection: SipTcpConnection = {
      address,
      port: socket.remotePort ?? 0,
      write: (bytes) => {
        if (socket.destroyed || !socket.writable) return false
        if (socket.writableLength > limits.maxWriteBufferBytes) {
          socket.destroy()
          return false
        }
        socket.write(bytes)
        return true
      },
    }
    socket.setNoDelay(true)
    socket.setTimeout(limits.idleMs, () => socket.destroy())
    // A reset or a write to a closed peer: the connection is gone, nothing else to do.
    socket.on('error', () => socket.destroy())
    socket.on('data', (chunk: Buffer) => {
      const results = framer.push(chunk)
      // After a framing error the last result is that error: it is not a message to answer.
      for (const result of framer.failed ? results.slice(0, -1) : results) events.onMessage(result, connection)
      if (framer.failed) {
        events.onRefused('framing_error', address)
        socket.destroy()
      }
    })
    return connection
  }
}
