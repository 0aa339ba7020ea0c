/**
 * SIP peers for tests, speaking bytes over real sockets: a UDP client (node:dgram) and a TCP client (node:net),
 * each queueing what it receives so a test waits on the next message instead of sleeping, and a request builder.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram'
import { connect, createServer, type Socket } from 'node:net'
import { randomBytes } from 'node:crypto'
import { decodeSipMessage } from '../../transports/sip/message/sip-message-codec.js'
import type { SipMessage, SipResponse } from '../../transports/sip/message/sip-message.js'
import { SipStreamFramer } from '../../transports/sip/endpoint/sip-stream-framer.js'
import type { SipSessionPort } from '../../transports/sip/calls/sip-call-transport.js'

/** Fields of a test request. */
export interface RequestFields {
  method: string
  branch?: string
  callId?: string
  cseq?: number
  userAgent?: string
  transport?: 'UDP' | 'TCP' | 'TLS'
  /** The Via sent-by; the client's own address and port by default. */
  viaHost?: string
  viaPort?: number
  toTag?: string
  extra?: string[]
}

/** A random RFC 3261 branch. */
export function newBranch(): string {
  return `z9hG4bK${randomBytes(6).toString('hex')}`
}

/** A request's bytes, CRLF line ends and a correct Content-Length. */
export function sipRequest(f: RequestFields): Buffer {
  const lines = [
    `${f.method} sip:+15550001111@127.0.0.1 SIP/2.0`,
    `Via: SIP/2.0/${f.transport ?? 'UDP'} ${f.viaHost ?? '127.0.0.1'}:${f.viaPort ?? 5999};branch=${f.branch ?? newBranch()};rport`,
    'Max-Forwards: 70',
    'From: <sip:+15552223333@pbx.example.net>;tag=abc123',
    `To: <sip:+15550001111@127.0.0.1>${f.toTag === undefined ? '' : `;tag=${f.toTag}`}`,
    `Call-ID: ${f.callId ?? randomBytes(8).toString('hex')}@pbx.example.net`,
    `CSeq: ${f.cseq ?? 1} ${f.method}`,
    ...(f.userAgent === undefined ? [] : [`User-Agent: ${f.userAgent}`]),
    ...(f.extra ?? []),
    'Content-Length: 0',
    '',
    '',
  ]
  return Buffer.from(lines.join('\r\n'))
}

/** A queue of received messages with a waiting `next()`. */
export class Inbox<T> {
  readonly items: T[] = []
  #waiters: ((v: T) => void)[] = []
  push(v: T): void {
    const w = this.#waiters.shift()
    if (w) w(v)
    else this.items.push(v)
  }
  next(timeoutMs: number, what: string): Promise<T> {
    const ready = this.items.shift()
    if (ready !== undefined) return Promise.resolve(ready)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== done)
        reject(new Error(`no ${what} within ${timeoutMs} ms`))
      }, timeoutMs)
      const done = (v: T): void => {
        clearTimeout(timer)
        resolve(v)
      }
      this.#waiters.push(done)
    })
  }
}

/** Decodes a response, failing the test on anything else. */
function asResponse(bytes: Buffer): SipResponse {
  const r = decodeSipMessage(bytes)
  if (!r.ok) throw new Error(`undecodable answer: ${r.error.reason}`)
  if (r.message.kind !== 'response') throw new Error('got a request, expected a response')
  return r.message
}

/** A UDP SIP peer bound to `address` (127.0.0.2 is another source on Linux loopback). */
export class UdpPeer {
  readonly #socket: UdpSocket
  readonly #inbox = new Inbox<Buffer>()
  constructor(
    socket: UdpSocket,
    readonly target: { host: string; port: number },
  ) {
    this.#socket = socket
    socket.on('message', (m) => this.#inbox.push(m))
  }
  static async open(target: { host: string; port: number }, address = '127.0.0.1'): Promise<UdpPeer> {
    const socket = createSocket('udp4')
    await new Promise<void>((resolve) => socket.bind(0, address, resolve))
    return new UdpPeer(socket, target)
  }
  get port(): number {
    return this.#socket.address().port
  }
  /** Raw datagrams not yet read. */
  get unread(): number {
    return this.#inbox.items.length
  }
  send(bytes: Buffer): Promise<void> {
    return new Promise((resolve, reject) =>
      this.#socket.send(bytes, this.target.port, this.target.host, (e) => (e ? reject(e) : resolve())),
    )
  }
  nextRaw(timeoutMs = 2000): Promise<Buffer> {
    return this.#inbox.next(timeoutMs, 'datagram')
  }
  async next(timeoutMs = 2000): Promise<SipResponse> {
    return asResponse(await this.nextRaw(timeoutMs))
  }
  close(): Promise<void> {
    return new Promise((resolve) => this.#socket.close(() => resolve()))
  }
}

/** A TCP SIP peer: one connection, messages framed like the gateway frames them. */
export class TcpPeer {
  readonly #inbox = new Inbox<SipMessage>()
  readonly closed: Promise<void>
  constructor(readonly socket: Socket) {
    const framer = new SipStreamFramer()
    socket.on('data', (chunk) => {
      for (const r of framer.push(chunk)) if (r.ok) this.#inbox.push(r.message)
    })
    socket.on('error', () => undefined)
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()))
  }
  static async open(port: number, host = '127.0.0.1', localAddress?: string): Promise<TcpPeer> {
    const socket = connect({ port, host, localAddress })
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('error', reject)
    })
    return new TcpPeer(socket)
  }
  get port(): number {
    return this.socket.localPort ?? 0
  }
  send(bytes: Buffer | string): void {
    this.socket.write(bytes)
  }
  async next(timeoutMs = 2000): Promise<SipResponse> {
    const m = await this.#inbox.next(timeoutMs, 'SIP message on the connection')
    if (m.kind !== 'response') throw new Error('got a request, expected a response')
    return m
  }
  /** The next message of either kind (the gateway's own requests come on the connection too). */
  nextMessage(timeoutMs = 2000): Promise<SipMessage> {
    return this.#inbox.next(timeoutMs, 'SIP message on the connection')
  }
  close(): void {
    this.socket.destroy()
  }
}

/** A port free on 127.0.0.1 for both TCP and UDP at the moment of asking (for settings that refuse port 0). */
export async function freeSipPort(): Promise<number> {
  for (;;) {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as { port: number }).port
    const udp = createSocket('udp4')
    const ok = await new Promise<boolean>((resolve) => {
      udp.once('error', () => {
        udp.close()
        resolve(false)
      })
      udp.bind(port, '127.0.0.1', () => resolve(true))
    })
    await new Promise<void>((resolve) => server.close(() => resolve()))
    if (ok) {
      await new Promise<void>((resolve) => udp.close(() => resolve()))
      return port
    }
  }
}

/** A session for an endpoint under test that only takes what a call gives it (no agent, nothing said back). */
export function idleSipSession(id: string): SipSessionPort {
  return {
    id,
    isEnded: false,
    noteUserActivity: () => undefined,
    input: { pushAudio: () => undefined, audioWritten: () => undefined, markPlayed: () => undefined, dtmf: () => undefined },
    end: async () => undefined,
    transportClosed: async () => undefined,
  } as unknown as SipSessionPort
}
