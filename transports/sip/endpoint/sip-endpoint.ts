/**
 * The gateway's SIP endpoint: UDP and TCP on one address, and TLS on a port of its own when a certificate is given, each request decoded with the message codec, checked
 * against the scanner list and the per-source flood limit, stamped with where it came from, then answered
 * through the server transactions (sip-request-handler.ts). Nothing a peer sends throws out of a socket
 * handler: a failure inside is logged and counted, and the endpoint goes on.
 */
import { randomBytes } from 'node:crypto'
import type { RemoteInfo } from 'node:dgram'
import type { Log } from '../../../core/log.js'
import { ClientTransactionTable } from '../transactions/client-transaction-table.js'
import { DropLogThrottle } from './drop-log-throttle.js'
import { RtpPortPool } from '../media/rtp-port-pool.js'
import type { SipCall } from '../calls/sip-call.js'
import { SipCallAnswerer } from '../calls/sip-call-answerer.js'
import { SipDialogTable } from '../calls/sip-dialogs.js'
import { type SipDialEvents, type SipDialHandle, SipDialer, type SipDialRefusal, type SipDialRequest } from '../calls/sip-dialer.js'
import type { SipOutboundCall } from '../calls/sip-outbound-call.js'
import { isScanner } from './scanner-user-agents.js'
import { refuseEveryInvite, type SipAdmission, type SipSource } from '../calls/sip-admission.js'
import { decodeSipMessage, encodeSipMessage, isKeepAlive, type SipDecodeResult } from '../message/sip-message-codec.js'
import type { SipMessage } from '../message/sip-message.js'
import { SipRequestHandler } from './sip-request-handler.js'
import { responseToDecodeError } from '../message/sip-response.js'
import { DEFAULT_TCP_LIMITS, type SipTcpConnection, SipTcpListener, type SipTcpLimits } from './sip-tcp-listener.js'
import { contactFor, type SipPorts, trunkTlsOptions, viaFor } from './sip-tls.js'
import { SipUdpListener } from './sip-udp-listener.js'
import { DEFAULT_SOURCE_RATE_LIMITS, SourceRateLimiter, type SourceRateLimits } from './source-rate-limiter.js'
import { ServerTransactionTable } from '../transactions/server-transaction-table.js'
import { realTimers, type TimerScheduler } from '../timer-scheduler.js'
import { stampReceived } from '../message/via-received.js'

/** Why a message never reached the request handler (a malformed request may still get its 400), as counted. */
export type SipDropReason = 'scanner' | 'rate_limited' | 'malformed' | 'connection_limit' | 'framing_error' | 'internal_error'

/** What the endpoint counts; the wiring turns it into metrics. */
export interface SipEndpointMetrics {
  dropped(reason: SipDropReason): void
  /** A call was hung up because its peer sent no RTP or RTCP for the media timeout. */
  mediaTimeout?(): void
}

/** The TLS listener's settings (SIP_TLS_PORT, SIP_TLS_CERT, SIP_TLS_KEY), PEM text. */
export interface SipTlsOptions {
  /** 0 picks a free port (tests). */
  readonly port: number
  readonly cert: string
  readonly key: string
}

/** Endpoint options. */
export interface SipEndpointOptions {
  /** Bind address. */
  readonly host: string
  /** UDP and TCP port; 0 picks a free port both can use (tests). */
  readonly port: number
  /** The host our Contact carries (SIP_PUBLIC_HOST). */
  readonly publicHost: string
  readonly log: Log
  /** Decides on each new INVITE; default: every one refused with 403. */
  readonly admission?: SipAdmission
  /** Why an outbound call may not go to a trunk at `ip`:`port` (the gateway's egress rules), or undefined. */
  readonly addressRefusal?: (ip: string, port: number) => string | undefined
  /** True while the gateway drains: new INVITEs get 503 (OPTIONS are still answered). */
  readonly isDraining?: () => boolean
  readonly metrics?: SipEndpointMetrics
  readonly rateLimits?: SourceRateLimits
  readonly tcpLimits?: SipTcpLimits
  readonly timers?: TimerScheduler
  /** Most live server transactions. */
  readonly maxTransactions?: number
  /** The RTP port range (RTP_PORT_MIN..RTP_PORT_MAX); 10000..20000 by default. */
  readonly rtpPorts?: { readonly min: number; readonly max: number }
  /** Most calls, ringing and connected. */
  readonly maxCalls?: number
  /** A TLS listener beside UDP and TCP, with the TCP bounds; undefined: no TLS listener. */
  readonly tls?: SipTlsOptions
  /** CA certificates (PEM, SIP_TLS_CA) trusted beside the system's when an outbound call dials a trunk over TLS. */
  readonly tlsCa?: string
  /** The clock of the once-a-minute drop log (tests); `Date.now` by default. */
  readonly now?: () => number
  /** No RTP or RTCP from a call's peer for this long hangs it up (`media_timeout`); 0 or unset: never. */
  readonly mediaTimeoutMs?: number
}

/** Counts by reason since start (the same figures the metrics get). */
export type SipDropCounts = Record<SipDropReason, number>

/** How many times a port 0 bind retries when TCP and UDP cannot get the same free port. */
const PORT_ATTEMPTS = 10

/** A listening SIP endpoint. */
export class SipEndpoint {
  readonly #options: SipEndpointOptions
  readonly #udp: SipUdpListener
  readonly #tcp: SipTcpListener
  readonly #tls: SipTcpListener | undefined
  readonly #transactions: ServerTransactionTable
  readonly #limiter: SourceRateLimiter
  readonly #dropLog: DropLogThrottle
  readonly #handler: SipRequestHandler
  readonly #dropped: SipDropCounts
  readonly #dialogs: SipDialogTable<SipCall | SipOutboundCall>
  readonly #dialer: SipDialer
  readonly #clients: ClientTransactionTable
  #draining = false
  #closing: Promise<void> | undefined

  private constructor(
    options: SipEndpointOptions,
    parts: {
      udp: SipUdpListener
      tcp: SipTcpListener
      tls: SipTcpListener | undefined
      transactions: ServerTransactionTable
      dropped: SipDropCounts
      timers: TimerScheduler
    },
  ) {
    this.#options = options
    this.#udp = parts.udp
    this.#tcp = parts.tcp
    this.#tls = parts.tls
    this.#transactions = parts.transactions
    this.#dropped = parts.dropped
    this.#dropLog = new DropLogThrottle(undefined, undefined, options.now)
    this.#limiter = new SourceRateLimiter(options.rateLimits ?? DEFAULT_SOURCE_RATE_LIMITS)
    this.#dialogs = new SipDialogTable<SipCall | SipOutboundCall>(options.maxCalls)
    this.#clients = new ClientTransactionTable(parts.timers)
    const rtpPorts = new RtpPortPool({ host: options.host, min: options.rtpPorts?.min ?? 10_000, max: options.rtpPorts?.max ?? 20_000 })
    const dialogs = this.#dialogs
    this.#dialer = new SipDialer({
      publicHost: options.publicHost,
      port: () => this.port,
      tlsPort: () => this.tlsPort,
      clients: this.#clients,
      timers: parts.timers,
      dialogs,
      rtpPorts,
      mediaTimeoutMs: options.mediaTimeoutMs,
      onMediaTimeout: (callId) => {
        options.metrics?.mediaTimeout?.()
        options.log.info({ call_id: callId }, 'SIP call hung up: no RTP or RTCP from the callee (media timeout)')
      },
      sendUdp: (message, address, port) =>
        this.#udp.send(encodeSipMessage(message), address, port, (e) =>
          options.log.debug({ err: e, address, port }, 'SIP UDP send failed'),
        ),
      connectTcp: async (address, port, tls) => {
        const secure = tls === undefined ? undefined : trunkTlsOptions(tls.serverName, options.tlsCa)
        // A refused connection or a certificate that does not check out: the call is refused as unreachable.
        const onError = (e: Error) =>
          options.log.warn({ err: e, address, port, tls: tls !== undefined }, 'SIP connection to a trunk failed')
        const opened = await this.#tcp.connect(address, port, undefined, secure, onError)
        return opened && { send: (m) => void opened.connection.write(encodeSipMessage(m)), close: opened.close }
      },
      onError: (error) => options.log.error({ err: error }, 'SIP outbound call media failed'),
      addressRefusal: options.addressRefusal,
    })
    this.#handler = new SipRequestHandler({
      transactions: this.#transactions,
      admission: options.admission ?? refuseEveryInvite,
      isDraining: () => this.isDraining,
      contact: (transport, requestUri) => contactFor(options.publicHost, transport, this.#ports, /^sips:/i.test(requestUri)),
      onAdmissionError: (error) => options.log.error({ err: error }, 'SIP admission failed; the INVITE got 500'),
      calls: {
        dialogs,
        clients: this.#clients,
        timers: parts.timers,
        answerer: new SipCallAnswerer({
          rtpPorts,
          publicHost: options.publicHost,
          onError: (error) => options.log.error({ err: error }, 'SIP call failed (opening its session, or in its media)'),
          onConnected: (call) => dialogs.confirm(call.inviteKey, call.callId, call.localTag, call),
          mediaTimeoutMs: options.mediaTimeoutMs,
          onMediaTimeout: (call) => {
            options.metrics?.mediaTimeout?.()
            options.log.info({ call_id: call.callId }, 'SIP call hung up: no RTP or RTCP from the peer (media timeout)')
          },
        }),
        via: (transport) => viaFor(options.publicHost, transport, this.#ports),
      },
    })
  }

  /** Binds UDP and TCP on the same port (and TLS on its own, when configured) and starts answering. */
  static async start(options: SipEndpointOptions): Promise<SipEndpoint> {
    const dropped: SipDropCounts = {
      scanner: 0,
      rate_limited: 0,
      malformed: 0,
      connection_limit: 0,
      framing_error: 0,
      internal_error: 0,
    }
    const transactions = new ServerTransactionTable(options.timers ?? realTimers, options.maxTransactions)
    // The sockets need the endpoint to hand messages to, and the endpoint needs the sockets: late-bound.
    let endpoint: SipEndpoint | undefined
    const tcpEvents = {
      onMessage: (result: SipDecodeResult, connection: SipTcpConnection) => {
        if (endpoint !== undefined) endpoint.#onTcp(result, connection)
      },
      onRefused: (reason: 'connection_limit' | 'framing_error', address: string) => {
        if (endpoint !== undefined) endpoint.#drop(reason, address)
      },
    }
    const onDatagram = (bytes: Buffer, from: RemoteInfo): void => {
      if (endpoint !== undefined) endpoint.#onDatagram(bytes, from)
    }
    const onUdpError = (error: Error): void => options.log.warn({ err: error }, 'SIP UDP socket error')
    const limits = options.tcpLimits ?? DEFAULT_TCP_LIMITS
    let lastError: unknown
    let bound: { tcp: SipTcpListener; udp: SipUdpListener } | undefined
    for (let attempt = 0; attempt < (options.port === 0 ? PORT_ATTEMPTS : 1); attempt++) {
      const tcp = await SipTcpListener.listen(options.host, options.port, tcpEvents, limits)
      try {
        const udp = await SipUdpListener.bind(options.host, tcp.port, onDatagram, onUdpError)
        bound = { tcp, udp }
        break
      } catch (e) {
        lastError = e
        await tcp.close()
      }
    }
    if (bound === undefined) throw lastError
    const { tcp, udp } = bound
    let tls: SipTcpListener | undefined
    try {
      tls =
        options.tls &&
        (await SipTcpListener.listen(options.host, options.tls.port, tcpEvents, limits, { cert: options.tls.cert, key: options.tls.key }))
    } catch (e) {
      await Promise.all([tcp.close(), udp.close()])
      throw e
    }
    endpoint = new SipEndpoint(options, { udp, tcp, tls, transactions, dropped, timers: options.timers ?? realTimers })
    return endpoint
  }

  /** The port UDP and TCP listen on. */
  get port(): number {
    return this.#tcp.port
  }

  /** The TLS listener's port; undefined without TLS. */
  get tlsPort(): number | undefined {
    return this.#tls?.port
  }

  /** True once `drain()` was called or the gateway's drain predicate says so. */
  get isDraining(): boolean {
    return this.#draining || (this.#options.isDraining?.() ?? false)
  }

  /** Live server transactions (a leak shows here). */
  get liveTransactions(): number {
    return this.#transactions.size
  }

  /** Calls held, ringing or connected (a leak shows here). */
  get liveCalls(): number {
    return this.#dialogs.size
  }

  /** Messages dropped without an answer, by reason. */
  get dropped(): Readonly<SipDropCounts> {
    return this.#dropped
  }

  /** Places an outbound call through a trunk (outbound calls are placed while draining too: their session was admitted). */
  dial(request: SipDialRequest, events: SipDialEvents): Promise<SipDialHandle | { refused: SipDialRefusal }> {
    return this.#dialer.dial(request, events)
  }

  /** New INVITEs get 503 with Retry-After from now on; OPTIONS are still answered. */
  drain(): void {
    this.#draining = true
  }

  /** Closes both sockets and forgets every transaction. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      // The sessions ended before (the gateway closes them first); what is left only holds ports.
      for (const call of this.#dialogs.calls()) call.drop()
      this.#clients.close()
      this.#transactions.close()
      await Promise.all([this.#udp.close(), this.#tcp.close(), this.#tls?.close()])
    })()
    return this.#closing
  }

  #onDatagram(bytes: Buffer, from: RemoteInfo): void {
    const source: SipSource = { address: from.address, port: from.port, transport: 'udp' }
    // RFC 5626 keep-alives over UDP (linphone sends CRLFCRLF every 30 s): nothing to answer, count or log, and
    // cheaper to recognise than a bucket look-up.
    if (isKeepAlive(bytes)) return
    this.#guard(source, () => {
      // The bucket is checked before decoding: a flood costs a map look-up per packet, not a parse. Responses
      // from a trunk we have outbound calls with are not limited: they answer transactions we started.
      const ours = this.#dialer.isPeer(source.address) && isResponse(bytes)
      if (!ours && !this.#limiter.take(source.address)) return this.#drop('rate_limited', source.address)
      const result = decodeSipMessage(bytes, { framing: 'datagram' })
      const send = (message: SipMessage, address: string, port: number): void =>
        this.#udp.send(encodeSipMessage(message), address, port, (e) =>
          this.#options.log.debug({ err: e, address, port }, 'SIP UDP send failed'),
        )
      if (!result.ok) {
        const answer = responseToDecodeError(result.error, newTag())
        this.#drop('malformed', source.address, result.error.code)
        if (answer !== null) send(answer, source.address, source.port)
        return
      }
      if (result.message.kind !== 'request') return void this.#clients.receive(result.message)
      if (isScanner(result.message)) return this.#drop('scanner', source.address)
      const stamped = stampReceived(result.message, source)
      if (stamped === null) return this.#drop('malformed', source.address, 'bad_via')
      const { address, port } = stamped.destination
      this.#handler.handle(stamped.request, {
        source,
        reliable: false,
        send: (m) => send(m, address, port),
        sendRequest: (m) => send(m, source.address, source.port),
      })
    })
  }

  #onTcp(result: SipDecodeResult, connection: SipTcpConnection): void {
    const source: SipSource = { address: connection.address, port: connection.port, transport: connection.transport }
    this.#guard(source, () => {
      const ours = this.#dialer.isPeer(source.address) && result.ok && result.message.kind === 'response'
      if (!ours && !this.#limiter.take(source.address)) return this.#drop('rate_limited', source.address)
      const send = (message: SipMessage): void => {
        connection.write(encodeSipMessage(message))
      }
      if (!result.ok) {
        const answer = responseToDecodeError(result.error, newTag())
        this.#drop('malformed', source.address, result.error.code)
        if (answer !== null) send(answer)
        return
      }
      if (result.message.kind !== 'request') return void this.#clients.receive(result.message)
      if (isScanner(result.message)) return this.#drop('scanner', source.address)
      // Section 18.2.1: the Via gets `received` over TCP too; the answer goes on the connection regardless.
      const stamped = stampReceived(result.message, source)
      if (stamped === null) return this.#drop('malformed', source.address, 'bad_via')
      this.#handler.handle(stamped.request, { source, reliable: true, send, sendRequest: send })
    })
  }

  get #ports(): SipPorts {
    return { sip: this.port, tls: this.tlsPort }
  }

  /** Runs a socket handler's work; whatever it throws is counted and logged, never raised to the socket. */
  #guard(source: SipSource, work: () => void): void {
    try {
      work()
    } catch (e) {
      this.#dropped.internal_error++
      this.#options.metrics?.dropped('internal_error')
      this.#options.log.error({ err: e, source: source.address, transport: source.transport }, 'SIP message handling failed')
    }
  }

  #drop(reason: SipDropReason, address: string, detail?: string): void {
    this.#dropped[reason]++
    this.#options.metrics?.dropped(reason)
    const counts = this.#dropLog.record(address, reason)
    if (counts !== null)
      this.#options.log.info({ source: address, counts, detail }, 'SIP traffic dropped (logged once a minute per source)')
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
