/**
 * The gateway's SIP endpoint: UDP and TCP on one address, and TLS on a port of its own when a certificate is given
 * (sip-listeners.ts), each message put through the checks of sip-message-intake.ts (flood limit, codec, scanner
 * list, Via stamp), then answered through the server transactions (sip-request-handler.ts); calls out go through
 * the dialer. This file wires those together and owns their lifecycle.
 */
import type { Log } from '../../../core/log.js'
import { ClientTransactionTable } from '../transactions/client-transaction-table.js'
import { SipDropCounter, type SipDropCounts, type SipDropMetrics } from './sip-drop-counter.js'
import { RtpPortPool } from '../media/rtp-port-pool.js'
import type { SipCall } from '../calls/sip-call.js'
import { SipCallAnswerer } from '../calls/sip-call-answerer.js'
import { SipDialogTable } from '../calls/sip-dialogs.js'
import { type SipDialEvents, type SipDialHandle, SipDialer, type SipDialRefusal, type SipDialRequest } from '../calls/sip-dialer.js'
import type { SipOutboundCall } from '../calls/sip-outbound-call.js'
import { refuseEveryInvite, type SipAdmission } from '../calls/sip-admission.js'
import { encodeSipMessage } from '../message/sip-message-codec.js'
import type { SipMessage } from '../message/sip-message.js'
import { SipRequestHandler } from './sip-request-handler.js'
import { bindSipListeners, type SipTlsOptions } from './sip-listeners.js'
import type { SipTcpListener, SipTcpLimits } from './sip-tcp-listener.js'
import { contactFor, type SipPorts, trunkTlsOptions, viaFor } from './sip-tls.js'
import type { SipUdpListener } from './sip-udp-listener.js'
import { SipMessageIntake } from './sip-message-intake.js'
import { DEFAULT_SOURCE_RATE_LIMITS, type SourceRateLimits } from './source-rate-limiter.js'
import { ServerTransactionTable } from '../transactions/server-transaction-table.js'
import { realTimers, type TimerScheduler } from '../timer-scheduler.js'

/** What the endpoint counts; the wiring turns it into metrics. */
export interface SipEndpointMetrics extends SipDropMetrics {
  /** A call was hung up because its peer sent no RTP or RTCP for the media timeout. */
  mediaTimeout?(): void
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
  /** Offer and accept RFC 3389 comfort noise (silence suppressed toward peers that take it); default true. */
  readonly comfortNoise?: boolean
}

/** A listening SIP endpoint. */
export class SipEndpoint {
  readonly #options: SipEndpointOptions
  readonly #udp: SipUdpListener
  readonly #tcp: SipTcpListener
  readonly #tls: SipTcpListener | undefined
  readonly #transactions: ServerTransactionTable
  readonly #handler: SipRequestHandler
  readonly #drops: SipDropCounter
  readonly #intake: SipMessageIntake
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
      timers: TimerScheduler
    },
  ) {
    this.#options = options
    this.#udp = parts.udp
    this.#tcp = parts.tcp
    this.#tls = parts.tls
    this.#transactions = parts.transactions
    this.#drops = new SipDropCounter(options.log, options.metrics, options.now)
    this.#dialogs = new SipDialogTable<SipCall | SipOutboundCall>(options.maxCalls)
    this.#clients = new ClientTransactionTable(parts.timers)
    const comfortNoise = options.comfortNoise ?? true
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
      comfortNoise,
      onMediaTimeout: (callId) => {
        options.metrics?.mediaTimeout?.()
        options.log.info({ call_id: callId }, 'SIP call hung up: no RTP or RTCP from the callee (media timeout)')
      },
      sendUdp: (message, address, port) => this.#sendUdp(message, address, port),
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
          comfortNoise,
          onMediaTimeout: (call) => {
            options.metrics?.mediaTimeout?.()
            options.log.info({ call_id: call.callId }, 'SIP call hung up: no RTP or RTCP from the peer (media timeout)')
          },
        }),
        via: (transport) => viaFor(options.publicHost, transport, this.#ports),
      },
    })
    this.#intake = new SipMessageIntake({
      rateLimits: options.rateLimits ?? DEFAULT_SOURCE_RATE_LIMITS,
      drops: this.#drops,
      isPeer: (address) => this.#dialer.isPeer(address),
      clients: this.#clients,
      handler: this.#handler,
      sendUdp: (message, address, port) => this.#sendUdp(message, address, port),
    })
  }

  /** Binds UDP and TCP on the same port (and TLS on its own, when configured) and starts answering. */
  static async start(options: SipEndpointOptions): Promise<SipEndpoint> {
    const transactions = new ServerTransactionTable(options.timers ?? realTimers, options.maxTransactions)
    // The sockets need the endpoint to hand messages to, and the endpoint needs the sockets: late-bound.
    let endpoint: SipEndpoint | undefined
    const { udp, tcp, tls } = await bindSipListeners(options, {
      onMessage: (result, connection) => {
        if (endpoint !== undefined) endpoint.#intake.stream(result, connection)
      },
      onRefused: (reason, address) => {
        if (endpoint !== undefined) endpoint.#drops.drop(reason, address)
      },
      onDatagram: (bytes, from) => {
        if (endpoint !== undefined) endpoint.#intake.datagram(bytes, from)
      },
    })
    endpoint = new SipEndpoint(options, { udp, tcp, tls, transactions, timers: options.timers ?? realTimers })
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
    return this.#drops.counts
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

  /** The one UDP send, for answers and for outbound calls; a lost datagram is the peer's retransmission's to fix. */
  #sendUdp(message: SipMessage, address: string, port: number): void {
    this.#udp.send(encodeSipMessage(message), address, port, (e) =>
      this.#options.log.debug({ err: e, address, port }, 'SIP UDP send failed'),
    )
  }

  get #ports(): SipPorts {
    return { sip: this.port, tls: this.tlsPort }
  }
}
