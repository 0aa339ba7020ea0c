/**
 * What every message from a peer goes through before the request handler, in this order: UDP keep-alives
 * ignored, the per-source flood limit (before decoding), the codec (a 400 where one can be sent), responses handed
 * to our client transactions, the scanner check, and the Via stamp. Nothing a peer sends throws out of here: a
 * failure inside is counted and logged, and the endpoint goes on.
 */
import { randomBytes } from 'node:crypto'
import type { RemoteInfo } from 'node:dgram'
import type { SipSource } from '../calls/sip-admission.js'
import { decodeSipMessage, encodeSipMessage, isKeepAlive, type SipDecodeResult } from '../message/sip-message-codec.js'
import type { SipMessage } from '../message/sip-message.js'
import { responseToDecodeError } from '../message/sip-response.js'
import { stampReceived } from '../message/via-received.js'
import type { ClientTransactionTable } from '../transactions/client-transaction-table.js'
import { isScanner } from './scanner-user-agents.js'
import type { SipDropCounter } from './sip-drop-counter.js'
import type { SipRequestHandler } from './sip-request-handler.js'
import type { SipTcpConnection } from './sip-tcp-listener.js'
import { SourceRateLimiter, type SourceRateLimits } from './source-rate-limiter.js'

/** What the intake hands messages to, and counts drops with. */
export interface SipIntakeParts {
  readonly rateLimits: SourceRateLimits
  readonly drops: SipDropCounter
  /** True for a trunk we have outbound calls with: its responses answer transactions we started. */
  readonly isPeer: (address: string) => boolean
  /** Our client transactions, which responses go to. */
  readonly clients: Pick<ClientTransactionTable, 'receive'>
  readonly handler: Pick<SipRequestHandler, 'handle'>
  /** Sends over the UDP socket; a failure is logged there, not raised. */
  readonly sendUdp: (message: SipMessage, address: string, port: number) => void
}

/** The checks between the sockets and the request handler. */
export class SipMessageIntake {
  readonly #limiter: SourceRateLimiter
  readonly #drops: SipDropCounter
  readonly #isPeer: (address: string) => boolean
  readonly #clients: Pick<ClientTransactionTable, 'receive'>
  readonly #handler: Pick<SipRequestHandler, 'handle'>
  readonly #sendUdp: (message: SipMessage, address: string, port: number) => void

  constructor(parts: SipIntakeParts) {
    this.#limiter = new SourceRateLimiter(parts.rateLimits)
    this.#drops = parts.drops
    this.#isPeer = parts.isPeer
    this.#clients = parts.clients
    this.#handler = parts.handler
    this.#sendUdp = parts.sendUdp
  }

  /** A UDP datagram from `from`. */
  datagram(bytes: Buffer, from: RemoteInfo): void {
    const source: SipSource = { address: from.address, port: from.port, transport: 'udp' }
    // RFC 5626 keep-alives over UDP (linphone sends CRLFCRLF every 30 s): nothing to answer, count or log, and
    // cheaper to recognise than a bucket look-up.
    if (isKeepAlive(bytes)) return
    this.#guard(source, () => {
      // The bucket is checked before decoding: a flood costs a map look-up per packet, not a parse. Responses
      // from a trunk we have outbound calls with are not limited: they answer transactions we started.
      const ours = this.#isPeer(source.address) && isResponse(bytes)
      if (!ours && !this.#limiter.take(source.address)) return this.#drops.drop('rate_limited', source.address)
      const result = decodeSipMessage(bytes, { framing: 'datagram' })
      const send = this.#sendUdp
      if (!result.ok) {
        const answer = responseToDecodeError(result.error, newTag())
        this.#drops.drop('malformed', source.address, result.error.code)
        if (answer !== null) send(answer, source.address, source.port)
        return
      }
      if (result.message.kind !== 'request') return void this.#clients.receive(result.message)
      if (isScanner(result.message)) return this.#drops.drop('scanner', source.address)
      const stamped = stampReceived(result.message, source)
      if (stamped === null) return this.#drops.drop('malformed', source.address, 'bad_via')
      const { address, port } = stamped.destination
      this.#handler.handle(stamped.request, {
        source,
        reliable: false,
        send: (m) => send(m, address, port),
        sendRequest: (m) => send(m, source.address, source.port),
      })
    })
  }

  /** A message framed on a TCP or TLS connection. */
  stream(result: SipDecodeResult, connection: SipTcpConnection): void {
    const source: SipSource = { address: connection.address, port: connection.port, transport: connection.transport }
    this.#guard(source, () => {
      const ours = this.#isPeer(source.address) && result.ok && result.message.kind === 'response'
      if (!ours && !this.#limiter.take(source.address)) return this.#drops.drop('rate_limited', source.address)
      const send = (message: SipMessage): void => {
        connection.write(encodeSipMessage(message))
      }
      if (!result.ok) {
        const answer = responseToDecodeError(result.error, newTag())
        this.#drops.drop('malformed', source.address, result.error.code)
        if (answer !== null) send(answer)
        return
      }
      if (result.message.kind !== 'request') return void this.#clients.receive(result.message)
      if (isScanner(result.message)) return this.#drops.drop('scanner', source.address)
      // Section 18.2.1: the Via gets `received` over TCP too; the answer goes on the connection regardless.
      const stamped = stampReceived(result.message, source)
      if (stamped === null) return this.#drops.drop('malformed', source.address, 'bad_via')
      this.#handler.handle(stamped.request, { source, reliable: true, send, sendRequest: send })
    })
  }

  /** Runs a socket handler's work; whatever it throws is counted and logged, never raised to the socket. */
  #guard(source: SipSource, work: () => void): void {
    try {
      work()
    } catch (e) {
      this.#drops.failed(source, e)
    }
  }
}

/** A datagram that starts as a SIP response does (`SIP/2.0 `); requests start with their method. */
function isResponse(bytes: Buffer): boolean {
  return bytes.length > 8 && bytes.toString('latin1', 0, 8) === 'SIP/2.0 '
}

/** A To tag for a 400: 64 random bits. */
function newTag(): string {
  return randomBytes(8).toString('hex')
}
