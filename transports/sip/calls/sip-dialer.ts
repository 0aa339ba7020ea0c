/**
 * Places outbound calls from the endpoint: the trunk's URI gives the host and port (5060 by default, 5061 over TLS)
 * the INVITE goes to, over UDP, or over a TCP connection of the call's own when the URI says `transport=tcp`, or a
 * TLS one for a `sips:` URI or `transport=tls` (the trunk's certificate checked against the trusted CAs and the
 * URI's host); an RTP port is taken for our offer (PCMU, PCMA, telephone-event); the call is held in the
 * endpoint's dialog table from the start, so the callee's BYE (its To tag is our From tag) finds it. When the
 * 200 comes, the media starts and the owner gets the call's transport to open its session over.
 *
 * Early media (RFC 3960's gateway model): an owner that listens for it (`onEarlyAudio`) gets the callee's RTP from
 * the first 180 or 183 that carries SDP: the media opens on that SDP, receiving only (we send nothing before the
 * answer, and the callee's silence is no reason to hang up a call that rings), and the 200's SDP then takes over.
 */
import { randomBytes, randomInt } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import { decodeAlaw, encodeMulaw } from '../../../pipeline/index.js'
import type { ClientTransactionTable } from '../transactions/client-transaction-table.js'
import type { TimerScheduler } from '../timer-scheduler.js'
import type { RtpPortPool } from '../media/rtp-port-pool.js'
import { RtpMedia } from '../media/rtp-media.js'
import { createOffer, type LocalMedia, type NegotiatedAudio, readAnswer } from '../media/sdp-offer-answer.js'
import type { SipCall } from './sip-call.js'
import { SipCallTransport } from './sip-call-transport.js'
import type { SipDialogTable } from './sip-dialogs.js'
import type { SipMessage } from '../message/sip-message.js'
import { type SipDialFailure, SipOutboundCall } from './sip-outbound-call.js'
import { parseUri } from '../message/sip-uri-codec.js'
import { SDES_KEY_SALT_BYTES } from '../media/srtp/sdes-crypto-codec.js'
import type { MediaEncryption } from '../media/srtp/sdes-negotiation.js'

/** One call to place. */
export interface SipDialRequest {
  /** The trunk's outbound URI (`sip:host[:port][;transport=udp|tcp|tls]`, or `sips:host[:port]`). */
  readonly uri: string
  /** Our E.164 number (From). */
  readonly from: string
  /**
   * The callee (Request-URI and To): an E.164 number, at the trunk's host; or a `sip:`/`sips:` URI, sent as it is
   * through the trunk (the trunk is the outbound proxy that routes it).
   */
  readonly to: string
  readonly credentials?: { readonly username: string; readonly password: string } | undefined
  /** The trunk's SRTP setting: `optional` and `required` offer RTP/SAVP over TLS; absent: `none`. */
  readonly mediaEncryption?: MediaEncryption | undefined
}

/** What the owner hears about the call. */
export interface SipDialEvents {
  readonly onProgress: (status: number) => void
  /**
   * One 20 ms frame of mu-law 8 kHz from the callee before the answer (early media: an announcement, a queue's
   * ringback), as it plays; without this listener no early media is opened.
   */
  readonly onEarlyAudio?: ((frame: Buffer) => void) | undefined
  /** The callee answered: the transport to open the session over (the media already runs). */
  readonly onAnswered: (transport: SipCallTransport) => void
  readonly onFailed: (failure: SipDialFailure) => void
  /** The answered call is over (a BYE either way). */
  readonly onEnded?: (() => void) | undefined
}

/** A placed call: the owner cancels it before the answer; afterwards the session's end sends the BYE. */
export interface SipDialHandle {
  readonly callId: string
  cancel(): void
}

/** Why a call could not be placed at all. */
export type SipDialRefusal =
  | 'bad_uri'
  | 'unsupported_transport'
  | 'unresolvable'
  /** The trunk's address is one the gateway's egress rules refuse (the metadata service, the gateway itself...). */
  | 'forbidden_address'
  | 'unreachable'
  | 'no_rtp_port'
  | 'too_many_calls'
  /** The trunk requires SRTP but its URI is not TLS: the keys would travel in the clear. */
  | 'srtp_needs_tls'

/** What the dialer uses of the endpoint. */
export interface SipDialerParts {
  readonly publicHost: string
  readonly port: () => number
  readonly clients: ClientTransactionTable
  /** The endpoint's timers (the session timer of an answered call). */
  readonly timers: TimerScheduler
  readonly dialogs: SipDialogTable<SipCall | SipOutboundCall>
  readonly rtpPorts: RtpPortPool
  /** Sends a message over the endpoint's UDP socket. */
  readonly sendUdp: (message: SipMessage, address: string, port: number) => void
  /**
   * Opens a TCP connection of ours whose incoming messages the endpoint handles (TLS with `tls`: the certificate
   * must name `serverName`); null when it cannot.
   */
  readonly connectTcp: (
    address: string,
    port: number,
    tls?: { readonly serverName: string },
  ) => Promise<{ send(message: SipMessage): void; close(): void } | null>
  /** Our TLS listener's port, for our Contact over TLS (the SIP port without one). */
  readonly tlsPort?: () => number | undefined
  readonly onError: (error: unknown) => void
  /** No RTP or RTCP from an answered call's callee for this long hangs it up (`media_timeout`); 0 or unset: never. */
  readonly mediaTimeoutMs?: number | undefined
  /** A call was hung up for the media timeout (metrics, a log line). */
  readonly onMediaTimeout?: ((callId: string) => void) | undefined
  /** Offer comfort noise (`SIP_COMFORT_NOISE`). */
  readonly comfortNoise?: boolean | undefined
  /** Why a trunk at `ip`:`port` may not be dialled (the webhooks' egress rules), or undefined. */
  readonly addressRefusal?: ((ip: string, port: number) => string | undefined) | undefined
}

/** Places calls through trunks. */
export class SipDialer {
  readonly #p: SipDialerParts
  /** Addresses of trunks we have calls with, counted: their answers are ours, not a flood. */
  readonly #peers = new Map<string, number>()

  constructor(parts: SipDialerParts) {
    this.#p = parts
  }

  /** True while a call of ours goes to `address` (the endpoint does not rate-limit its answers). */
  isPeer(address: string): boolean {
    return this.#peers.has(address)
  }

  async dial(request: SipDialRequest, events: SipDialEvents): Promise<SipDialHandle | { refused: SipDialRefusal }> {
    const uri = parseUri(request.uri)
    if (uri === null || (uri.scheme !== 'sip' && uri.scheme !== 'sips')) return { refused: 'bad_uri' }
    const param = uri.params.get('transport')
    const named = typeof param === 'string' ? param.toLowerCase() : undefined
    // RFC 3261 section 26.2: a sips: URI is TLS all the way; it cannot ask for UDP or plain TCP.
    const transport =
      uri.scheme === 'sips' ? (named === undefined || named === 'tcp' || named === 'tls' ? 'tls' : undefined) : (named ?? 'udp')
    if (transport !== 'udp' && transport !== 'tcp' && transport !== 'tls') return { refused: 'unsupported_transport' }
    const stream = transport !== 'udp'
    if (request.mediaEncryption === 'required' && transport !== 'tls') return { refused: 'srtp_needs_tls' }
    // A sips: callee is TLS all the way (RFC 3261 section 26.2), the hop to the trunk included.
    if (request.to.startsWith('sips:') && transport !== 'tls') return { refused: 'unsupported_transport' }
    if (!this.#p.dialogs.hasRoom) return { refused: 'too_many_calls' }
    let address: string
    try {
      address = (await lookup(uri.host.replace(/^\[|\]$/g, ''))).address
    } catch {
      return { refused: 'unresolvable' }
    }
    const port = uri.port ?? (transport === 'tls' ? 5061 : 5060)
    // Checked on the address the call will reach (after DNS), like a webhook's: an organization names the URI.
    if (this.#p.addressRefusal?.(address, port) !== undefined || port === this.#p.port()) return { refused: 'forbidden_address' }
    const connection = stream
      ? await this.#p.connectTcp(address, port, transport === 'tls' ? { serverName: uri.host.replace(/^\[|\]$/g, '') } : undefined)
      : undefined
    if (connection === null) return { refused: 'unreachable' }
    const lease = await this.#p.rtpPorts.acquire()
    if (lease === null) {
      connection?.close()
      return { refused: 'no_rtp_port' }
    }
    const { publicHost } = this.#p
    const host = publicHost.includes(':') ? `[${publicHost}]` : publicHost
    const local: LocalMedia = {
      address: publicHost,
      port: lease.port,
      sessionId: String(randomInt(1, 2 ** 47)),
      sessionVersion: 1,
      srtp: { encryption: request.mediaEncryption ?? 'none', tls: transport === 'tls', keySalt: randomBytes(SDES_KEY_SALT_BYTES) },
      comfortNoise: this.#p.comfortNoise === true,
    }
    const trunkHost = uri.host + (uri.port === undefined ? '' : `:${uri.port}`)
    const target = calleeUri(request.to, uri.scheme, trunkHost)
    let media: RtpMedia | undefined
    let sipTransport: SipCallTransport | undefined
    /** The codec of early media opened on a provisional response's SDP (before the answer). */
    let earlyCodec: 'PCMU' | 'PCMA' | undefined
    const openMedia = (audio: NegotiatedAudio): RtpMedia =>
      new RtpMedia(
        lease,
        audio,
        address,
        {
          onAudio: (frame, atMs) => {
            if (sipTransport !== undefined) return sipTransport.callerAudio(frame, atMs)
            events.onEarlyAudio?.(earlyCodec === 'PCMA' ? Buffer.from(encodeMulaw(decodeAlaw(frame))) : frame)
          },
          onDigit: (digit) => sipTransport?.callerDigit(digit),
          onError: this.#p.onError,
          // A callee that vanished (no BYE, no RTP, no RTCP) must not hold the call until the duration limit.
          onMediaTimeout: () => {
            this.#p.onMediaTimeout?.(call.callId)
            sipTransport?.peerEnded('media_timeout')
            call.hangUp('media_timeout')
          },
        },
        { mediaTimeoutMs: this.#p.mediaTimeoutMs ?? 0 },
      )
    const call: SipOutboundCall = new SipOutboundCall({
      target,
      from: `<sip:${request.from}@${host}>`,
      to: `<${target}>`,
      callId: `${randomBytes(12).toString('hex')}@${host}`,
      localTag: randomBytes(8).toString('hex'),
      contact: ourContact(uri.scheme, transport, host, transport === 'tls' ? (this.#p.tlsPort?.() ?? this.#p.port()) : this.#p.port()),
      via: {
        host: publicHost,
        port: transport === 'tls' ? (this.#p.tlsPort?.() ?? this.#p.port()) : this.#p.port(),
        transport: transport === 'tls' ? 'TLS' : transport === 'tcp' ? 'TCP' : 'UDP',
      },
      credentials: request.credentials,
      local,
      offer: createOffer(local),
      wire:
        connection === undefined
          ? { reliable: false, send: (m) => this.#p.sendUdp(m, address, port) }
          : { reliable: true, send: (m) => connection.send(m) },
      clients: this.#p.clients,
      timers: this.#p.timers,
      events: {
        onProgress: (status, sdp) => {
          events.onProgress(status)
          if (sdp === '' || media !== undefined || events.onEarlyAudio === undefined || call.state !== 'calling') return
          const early = readAnswer(sdp, undefined, local)
          if (!early.ok) return
          earlyCodec = early.audio.codec
          media = openMedia(early.audio)
          // Held on our side: nothing is sent to the callee before the answer, and no media timeout runs.
          media.update({ ...early.audio, held: true })
          media.start()
        },
        onAnswered: (audio, peerAllows) => {
          if (media === undefined) media = openMedia(audio)
          else media.update(audio)
          sipTransport = new SipCallTransport(media, audio.codec, { onSessionEnded: (reason) => call.hangUp(reason) }, peerAllows)
          call.attach(media, sipTransport)
          media.start()
          events.onAnswered(sipTransport)
        },
        onFailed: events.onFailed,
        onEnded: () => {
          this.#p.dialogs.remove(call)
          const left = (this.#peers.get(address) ?? 1) - 1
          if (left <= 0) this.#peers.delete(address)
          else this.#peers.set(address, left)
          // Our BYE or the answer to theirs may still be on its way: the connection closes once it is written.
          connection?.close()
          // Never answered: early media (if any) stops and the port is freed.
          if (sipTransport === undefined) {
            media?.close()
            lease.release()
          } else events.onEnded?.()
        },
      },
    })
    this.#p.dialogs.confirm('', call.callId, call.localTag, call)
    this.#peers.set(address, (this.#peers.get(address) ?? 0) + 1)
    call.start()
    return { callId: call.callId, cancel: () => call.cancel() }
  }
}

/** Our Contact on an outbound call: `sips:` to a sips: trunk (RFC 3261 section 8.1.1.8), else the transport named. */
function ourContact(scheme: string, transport: 'udp' | 'tcp' | 'tls', host: string, port: number): string {
  if (scheme === 'sips') return `sips:${host}:${port}`
  return `sip:${host}:${port}${transport === 'udp' ? '' : `;transport=${transport}`}`
}

/** The Request-URI of the callee: a SIP URI as given, or the number at the trunk's host (the trunk's scheme). */
function calleeUri(to: string, scheme: string, trunkHost: string): string {
  return to.startsWith('sip:') || to.startsWith('sips:') ? to : `${scheme}:${to}@${trunkHost}`
}
