/**
 * Sends on a call's UDP socket, connected to the peer once the stream knows where the peer is (RTP latched).
 * A connected UDP socket is cheaper per datagram on both sides of the kernel (the route is looked up once, and
 * arriving datagrams are matched to the socket directly), and Node sends on it without resolving the address
 * (an `nextTick` per datagram on an unconnected socket, even for an IP literal). It also makes the kernel drop
 * datagrams from anyone else, which the stream would ignore anyway once latched.
 *
 * Node connects asynchronously; until the socket is connected, sends name the address. A send to another
 * address than the connected one disconnects first (synchronous), so a send always goes where it is asked to.
 * Sends take no callback: a failed datagram is a lost datagram, as on the wire, and no callback means no
 * `nextTick` per packet.
 */
import type { Socket } from 'node:dgram'

interface Peer {
  readonly address: string
  readonly port: number
}

const same = (a: Peer | undefined, address: string, port: number) => a !== undefined && a.address === address && a.port === port

/** One socket's sends, connected to the latched peer. */
export class ConnectedPeer {
  readonly #socket: Socket
  /** Where the socket is connected (Node says so in its callback). */
  #connected: Peer | undefined
  /** A connect under way: Node refuses another connect or a disconnect until it completes. */
  #connecting = false
  /** Where the stream wants the socket connected, or nowhere. */
  #wanted: Peer | undefined
  #closed = false

  constructor(socket: Socket) {
    this.#socket = socket
  }

  /** The stream latched to `address:port`: connect there (or nowhere, with `undefined`). */
  latch(peer: Peer | undefined): void {
    this.#wanted = peer
    this.#settle()
  }

  /** Sends one datagram to `address:port`. Never throws: a closed socket drops it. */
  send(bytes: Buffer, port: number, address: string): void {
    if (this.#closed) return
    try {
      if (same(this.#connected, address, port)) return void this.#socket.send(bytes)
      if (this.#connected !== undefined) this.#disconnect()
      this.#socket.send(bytes, port, address)
    } catch (e) {
      // Node connected the socket a moment before telling us (its callback comes on the next tick).
      if ((e as { code?: string }).code === 'ERR_SOCKET_DGRAM_IS_CONNECTED' && same(this.#wanted, address, port)) {
        return void this.#tryUnaddressed(bytes)
      }
      // Otherwise the socket closed under us (the call is ending): the datagram is simply not sent.
    }
  }

  #tryUnaddressed(bytes: Buffer): void {
    try {
      this.#socket.send(bytes)
    } catch {
      // Closed.
    }
  }

  /** Stops connecting; the socket itself is the lease's to close. */
  close(): void {
    this.#closed = true
  }

  #settle(): void {
    if (this.#closed || this.#connecting) return
    const wanted = this.#wanted
    if (wanted !== undefined && same(this.#connected, wanted.address, wanted.port)) return
    if (this.#connected !== undefined) this.#disconnect()
    if (wanted === undefined) return
    this.#connecting = true
    try {
      // Node calls back with the error when the connect failed (typed as no argument).
      this.#socket.connect(wanted.port, wanted.address, ((error?: Error) => {
        this.#connecting = false
        if (error === undefined) this.#connected = wanted
        // A peer we cannot connect to is sent to unconnected, not retried.
        else if (this.#wanted === wanted) this.#wanted = undefined
        // The stream may have moved on while Node connected.
        this.#settle()
      }) as () => void)
    } catch {
      this.#connecting = false
    }
  }

  #disconnect(): void {
    this.#connected = undefined
    try {
      this.#socket.disconnect()
    } catch {
      // Not connected after all (a closed socket).
    }
  }
}
