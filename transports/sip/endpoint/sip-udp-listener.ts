/**
 * The endpoint's UDP socket: datagrams in, datagrams out. Decoding and answering live in the endpoint; this file
 * owns the socket, its errors and its close.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram'

/** A bound UDP socket. */
export class SipUdpListener {
  readonly #socket: Socket
  #closed = false

  private constructor(socket: Socket) {
    this.#socket = socket
  }

  /** Binds `host:port` (IPv6 when the host is an IPv6 address) and hands every datagram to `onDatagram`. */
  static async bind(
    host: string,
    port: number,
    onDatagram: (bytes: Buffer, from: RemoteInfo) => void,
    onError: (error: Error) => void,
  ): Promise<SipUdpListener> {
    const socket = createSocket({ type: host.includes(':') ? 'udp6' : 'udp4' })
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject)
      socket.bind(port, host, () => {
        socket.off('error', reject)
        resolve()
      })
    })
    socket.on('error', onError)
    socket.on('message', onDatagram)
    return new SipUdpListener(socket)
  }

  /** The bound port. */
  get port(): number {
    return this.#socket.address().port
  }

  /** Sends one datagram; a send error (an unreachable peer) is reported, never thrown. */
  send(bytes: Buffer, address: string, port: number, onError: (error: Error) => void): void {
    if (this.#closed) return
    this.#socket.send(bytes, port, address, (error) => {
      if (error) onError(error)
    })
  }

  /** Closes the socket. Idempotent. */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve()
    this.#closed = true
    return new Promise((resolve) => this.#socket.close(() => resolve()))
  }
}
