/**
 * The endpoint's TCP server, and with a certificate its TLS server (RFC 3261 section 26.3.1): each connection gets
 * its own stream framer (RFC 3261 section 18.3), and answers go back on the connection the request came on. Bounded: connections in all and per source address, bytes
 * waiting to be written to a peer that does not read, and time without a byte (an idle connection is closed).
 * A framing error closes the connection, since a stream cannot be resynchronised after one.
 */
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net'
import { type ConnectionOptions, createServer as createTlsServer, type SecureContextOptions, connect as tlsConnect } from 'node:tls'
import type { SipDecodeResult } from '../message/sip-message-codec.js'
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

/** A TLS handshake that has not finished in this long is cut off (node's default is 120 s). */
export const TLS_HANDSHAKE_TIMEOUT_MS = 10_000

/** What a connection closed for a framing error is given to read its last answer before it is cut. */
const CLOSE_GRACE_MS = 2_000

/** RFC 5626 section 3.5.1's pong. */
const PONG = Buffer.from('\r\n')

/** One connection as the endpoint sees it. */
export interface SipTcpConnection {
  readonly address: string
  readonly port: number
  /** `tls` on the TLS listener and on connections of ours opened with TLS options. */
  readonly transport: 'tcp' | 'tls'
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

/** A listening TCP (or TLS) server. */
export class SipTcpListener {
  readonly #server: Server
  readonly #sockets = new Set<Socket>()
  readonly #events: SipTcpEvents
  readonly #limits: SipTcpLimits
  readonly #transport: 'tcp' | 'tls'
  #closing: Promise<void> | undefined

  private constructor(server: Server, events: SipTcpEvents, limits: SipTcpLimits, transport: 'tcp' | 'tls') {
    this.#server = server
    this.#events = events
    this.#limits = limits
    this.#transport = transport
  }

  /**
   * Listens on `host:port`; with `tls` (certificate and key) it is a TLS server whose connections count against
   * the limits once their handshake is done. Raw sockets still in their handshake are bounded by the same total
   * (`maxConnections` on the server) and by the handshake timeout.
   */
  static async listen(
    host: string,
    port: number,
    events: SipTcpEvents,
    limits: SipTcpLimits = DEFAULT_TCP_LIMITS,
    tls?: SecureContextOptions,
  ): Promise<SipTcpListener> {
    const perAddress = new Map<string, number>()
    const server = tls === undefined ? createServer() : createTlsServer({ ...tls, handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS })
    if (tls !== undefined) server.maxConnections = limits.maxConnections
    const listener = new SipTcpListener(server, events, limits, tls === undefined ? 'tcp' : 'tls')
    // A failed handshake (a scanner, a wrong certificate) closes that socket; nothing to answer.
    if (tls !== undefined) server.on('tlsClientError', () => undefined)
    server.on(tls === undefined ? 'connection' : 'secureConnection', (socket: Socket) => {
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
      listener.#serve(socket, address, events, limits, listener.#transport)
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
   * Opens a connection of ours (an outbound call over TCP, or TLS with `tls`: the server's certificate is checked
   * against `tls.ca` and its name): its messages reach the endpoint as an accepted connection's do, with the same
   * framing and write limits but no idle timeout (a call may be quiet for hours; the caller closes it when the call
   * ends). Null when it cannot connect (or the handshake fails) within `timeoutMs`; `onError` hears why.
   */
  async connect(
    host: string,
    port: number,
    timeoutMs = 5_000,
    tls?: ConnectionOptions,
    onError?: (error: Error) => void,
  ): Promise<{ connection: SipTcpConnection; close(): void } | null> {
    if (this.#closing !== undefined || this.#sockets.size >= this.#limits.maxConnections) return null
    const socket: Socket = tls === undefined ? netConnect({ host, port }) : tlsConnect({ ...tls, host, port })
    const connected = await new Promise<boolean>((resolve) => {
      let settled = false
      const settle = (ok: boolean, error?: Error) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        if (error !== undefined) onError?.(error)
        resolve(ok)
      }
      const timer = setTimeout(() => settle(false, new Error(`no connection within ${timeoutMs} ms`)), timeoutMs)
      socket.once(tls === undefined ? 'connect' : 'secureConnect', () => settle(true))
      socket.once('error', (e) => settle(false, e))
    })
    if (!connected || this.#closing !== undefined) {
      socket.destroy()
      return null
    }
    this.#sockets.add(socket)
    socket.once('close', () => this.#sockets.delete(socket))
    const connection = this.#serve(socket, host, this.#events, this.#limits, tls === undefined ? 'tcp' : 'tls')
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

  #serve(socket: Socket, address: string, events: SipTcpEvents, limits: SipTcpLimits, transport: 'tcp' | 'tls'): SipTcpConnection {
    const connection: SipTcpConnection = {
      address,
      port: socket.remotePort ?? 0,
      transport,
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
    // RFC 5626 section 4.4.1: a CRLFCRLF ping is answered with one CRLF, without counting it as traffic.
    const framer = new SipStreamFramer({ onPing: () => connection.write(PONG) })
    socket.setNoDelay(true)
    socket.setTimeout(limits.idleMs, () => socket.destroy())
    // A reset or a write to a closed peer: the connection is gone, nothing else to do.
    socket.on('error', () => socket.destroy())
    socket.on('data', (chunk: Buffer) => {
      const results = framer.push(chunk)
      // After a framing error the last result is that error: only a request over the size bound whose Via was
      // read is answered (513), then the connection is closed once that answer is written.
      const failure = framer.failed ? results.pop() : undefined
      for (const result of results) events.onMessage(result, connection)
      if (failure === undefined) return
      if (!failure.ok && failure.error.code === 'too_large' && failure.error.method !== undefined) events.onMessage(failure, connection)
      events.onRefused('framing_error', address)
      socket.end()
      // A peer that does not read our 513 and FIN is not waited for.
      setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref()
    })
    return connection
  }
}
