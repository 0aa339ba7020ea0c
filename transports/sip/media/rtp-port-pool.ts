/**
 * RTP sockets for calls, one per call, on even ports of `RTP_PORT_MIN..RTP_PORT_MAX` (RTP takes the even port,
 * RFC 3550 section 11; RTCP takes the odd one above, which is bound with it, so both must be inside the range (see
 * `rtpPortSlots`) and an RTP port is only handed out when its RTCP port is free too). The pool remembers which ports its
 * calls hold and starts each search after the last port it gave, so a port just freed is not reused at once (a
 * late packet of the old call must not reach the new one). A port some other process holds is skipped.
 */
import { createSocket, type Socket } from 'node:dgram'

/** An RTP socket bound for one call; `release()` closes it and frees the port (idempotent). */
export interface RtpPortLease {
  readonly socket: Socket
  readonly port: number
  /** The socket on `port + 1` for RTCP (RFC 3550 section 11); held even when a call multiplexes RTCP. */
  readonly rtcpSocket: Socket
  release(): void
}

/**
 * The RTP ports of a range: every even port whose odd neighbour (RTCP) is inside it too. An odd bound is not
 * an error: `10001..19999` gives 10002..19998 (RTCP up to 19999), `10000..20000` gives 10000..19998 (20000's
 * RTCP port would be 20001, outside). `null` when no pair fits.
 */
export function rtpPortSlots(min: number, max: number): { first: number; last: number; count: number } | null {
  const first = min + (min % 2)
  const last = max % 2 === 1 ? max - 1 : max - 2
  if (last < first) return null
  return { first, last, count: (last - first) / 2 + 1 }
}

/** Hands out RTP sockets from a port range. */
export class RtpPortPool {
  readonly #host: string
  readonly #min: number
  readonly #max: number
  readonly #held = new Set<number>()
  #cursor: number

  /** `min..max` as RTP_PORT_MIN..RTP_PORT_MAX say; a range with no RTP and RTCP pair in it throws. */
  constructor(options: { host: string; min: number; max: number }) {
    const slots = rtpPortSlots(options.min, options.max)
    if (slots === null) throw new RangeError(`no even port with its odd neighbour in ${options.min}..${options.max}`)
    this.#host = options.host
    this.#min = slots.first
    this.#max = slots.last
    this.#cursor = this.#min
  }

  /** Ports held by live calls. */
  get inUse(): number {
    return this.#held.size
  }

  /** Binds a socket on the next free even port; `null` when every port of the range is taken. */
  async acquire(): Promise<RtpPortLease | null> {
    const slots = Math.floor((this.#max - this.#min) / 2) + 1
    for (let tried = 0; tried < slots; tried++) {
      const port = this.#cursor
      this.#cursor = port + 2 > this.#max ? this.#min : port + 2
      if (this.#held.has(port)) continue
      const socket = await bind(this.#host, port)
      if (socket === null) continue
      const rtcpSocket = await bind(this.#host, port + 1)
      if (rtcpSocket === null) {
        socket.close()
        continue
      }
      this.#held.add(port)
      let released = false
      return {
        socket,
        port,
        rtcpSocket,
        release: () => {
          if (released) return
          released = true
          this.#held.delete(port)
          // After this turn: a last datagram just handed to a socket (the RTCP BYE) still leaves before it closes.
          setImmediate(() => {
            socket.close()
            rtcpSocket.close()
          })
        },
      }
    }
    return null
  }
}

/** A UDP socket bound to `host:port`, or `null` when the port is taken. */
function bind(host: string, port: number): Promise<Socket | null> {
  const socket = createSocket(host.includes(':') ? 'udp6' : 'udp4')
  return new Promise((resolve) => {
    const failed = (): void => {
      socket.close()
      resolve(null)
    }
    socket.once('error', failed)
    socket.bind(port, host, () => {
      socket.off('error', failed)
      resolve(socket)
    })
  })
}
