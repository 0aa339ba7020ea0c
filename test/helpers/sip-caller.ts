/**
 * A small SIP phone for tests, over real UDP sockets (or its SIP over a TLS connection, `openTls`): it sends an INVITE with a G.711 SDP offer (PCMU and
 * telephone-event; RTP/SAVP with an SDES key when asked, test/helpers/caller-srtp.ts), answers digest challenges, ACKs, hangs up or cancels, answers the gateway's BYE with 200,
 * sends RTP (caller speech, RFC 4733 digits) paced at 20 ms, and records every RTP packet it receives with its
 * arrival time. The messages it builds are plain RFC 3261 text, so what the gateway parses is what a phone sends.
 */
import { randomBytes } from 'node:crypto'
import { createSocket, type Socket } from 'node:dgram'
import { connect as netConnect } from 'node:net'
import { connect as tlsConnect, type TLSSocket } from 'node:tls'
import { authorize, pickChallenge } from '../../transports/sip/calls/digest-auth.js'
import { decodeRtp, encodeRtp } from '../../transports/sip/media/rtp-codec.js'
import { decodeSipMessage, encodeSipMessage } from '../../transports/sip/message/sip-message-codec.js'
import { getHeader, getHeaderValues, type SipRequest, type SipResponse } from '../../transports/sip/message/sip-message.js'
import { buildResponse } from '../../transports/sip/message/sip-response.js'
import { SipStreamFramer } from '../../transports/sip/endpoint/sip-stream-framer.js'
import { dtmfPackets } from '../../transports/sip/media/dtmf-sender.js'
import { CallerSrtp } from './caller-srtp.js'
import { Inbox } from './sip-wire.js'

/** Most RTP packets one late timer tick sends to catch up with the wall clock. */
const MAX_CATCH_UP_PACKETS = 5

/** One RTP packet the phone received. */
export interface HeardPacket {
  readonly at: number
  readonly sequence: number
  readonly timestamp: number
  readonly payloadType: number
  readonly marker: boolean
  readonly payload: Buffer
}

/** A test phone bound to `address` (127.0.0.2 is another source on Linux loopback). */
export class SipCaller {
  readonly heard: HeardPacket[] = []
  readonly responses = new Inbox<SipResponse>()
  readonly byes = new Inbox<SipRequest>()
  /** The gateway's other requests in the dialog (a session refresh, a REFER), for the test to answer with `respond`. */
  readonly requests = new Inbox<SipRequest>()
  readonly callId = `${randomBytes(8).toString('hex')}@test-phone`
  readonly fromTag = randomBytes(4).toString('hex')
  #cseq = 0
  #toTag: string | undefined
  #inviteBranch = ''
  #lastInvite: string[] = []
  #inviteUri = ''
  #rtpTarget: { address: string; port: number } | undefined
  #rtpSeq = 1000
  #rtpTs = 0
  #speaking: Promise<void> = Promise.resolve()
  /** The speaking timers, each with the resolve of its `speak()`: closing ends them and lets their callers go on. */
  readonly #timers = new Map<NodeJS.Timeout, () => void>()
  #closed = false
  #sdpVersion = 1
  /** The dialog's route set (the 200's Record-Route, reversed) and remote target (its Contact), when a proxy record-routed. */
  #routes: string[] = []
  #remoteTarget: string | undefined
  /** Whether our SDP offers telephone-event (payload type 101). */
  #telephoneEvent = true
  /** Whether our SDP offers comfort noise (CN, payload type 13). */
  #comfortNoise = false
  /** Media attributes our offers add (`a=rtcp-mux`). */
  #mediaLines: readonly string[] = []
  /** SDES-keyed SRTP, when the INVITE offered it. */
  #srtp: CallerSrtp | undefined

  private constructor(
    readonly sip: Socket,
    readonly rtp: Socket,
    readonly address: string,
    readonly gateway: { host: string; port: number },
    readonly stream?: TLSSocket,
  ) {
    sip.on('message', (bytes) => this.#onSip(bytes))
    const framer = new SipStreamFramer()
    stream?.on('data', (chunk: Buffer) => {
      for (const r of framer.push(chunk)) if (r.ok) this.#onSip(encodeSipMessage(r.message))
    })
    stream?.on('error', () => undefined)
    rtp.on('message', (bytes) => {
      const d = decodeRtp(this.#srtp === undefined ? bytes : (this.#srtp.unprotect(bytes) ?? Buffer.alloc(0)))
      if (d.kind === 'rtp') this.heard.push({ at: performance.now(), ...d.packet })
    })
  }

  static async open(gateway: { host: string; port: number }, address = '127.0.0.1'): Promise<SipCaller> {
    const bind = async () => {
      const s = createSocket('udp4')
      await new Promise<void>((resolve) => s.bind(0, address, resolve))
      return s
    }
    return new SipCaller(await bind(), await bind(), address, gateway)
  }

  /** A phone whose SIP goes over TLS to `gateway` (a TLS port), trusting `ca`; its RTP is UDP as ever. */
  static async openTls(gateway: { host: string; port: number }, ca: string, address = '127.0.0.1'): Promise<SipCaller> {
    const udp = await SipCaller.open(gateway, address)
    // From `address` (a TLS option cannot say so): the TCP connection is made first, and TLS runs over it.
    const stream = tlsConnect({
      socket: netConnect({ host: gateway.host, port: gateway.port, localAddress: address }),
      host: gateway.host,
      ca: [ca],
    })
    await new Promise<void>((resolve, reject) => {
      stream.once('secureConnect', resolve)
      stream.once('error', reject)
    })
    return new SipCaller(udp.sip, udp.rtp, address, gateway, stream)
  }

  get sipPort(): number {
    return this.sip.address().port
  }

  get rtpPort(): number {
    return this.rtp.address().port
  }

  /** Sends the INVITE (with `authorization` when retrying a challenge). */
  invite(
    to: string,
    opts: {
      authorization?: string
      sdp?: boolean
      extra?: string[]
      telephoneEvent?: boolean
      mediaLines?: string[]
      srtp?: boolean
      comfortNoise?: boolean
    } = {},
  ): void {
    if (opts.srtp === true) this.#srtp ??= new CallerSrtp()
    if (opts.comfortNoise === true) this.#comfortNoise = true
    this.#inviteBranch = `z9hG4bK${randomBytes(6).toString('hex')}`
    if (opts.telephoneEvent === false) this.#telephoneEvent = false
    if (opts.mediaLines !== undefined) this.#mediaLines = opts.mediaLines
    const sdp = opts.sdp === false ? '' : this.#offer()
    this.#lastInvite = [
      ...(opts.authorization === undefined ? [] : [`Authorization: ${opts.authorization}`]),
      ...(opts.extra ?? []),
      `Contact: <${this.#contactUri}>`,
      ...(sdp === '' ? [] : ['Content-Type: application/sdp']),
    ]
    this.#inviteUri = `sip:${to}@${this.gateway.host}`
    this.#send(`INVITE ${this.#inviteUri} SIP/2.0`, 'INVITE', this.#inviteBranch, ++this.#cseq, this.#lastInvite, sdp)
  }

  /** Answers a 401 by re-sending the INVITE with digest credentials. */
  retryWithDigest(challenge: SipResponse, to: string, username: string, password: string): void {
    const picked = pickChallenge(getHeaderValues(challenge, 'WWW-Authenticate') ?? [])
    if (picked === null) throw new Error('no digest challenge in the 401')
    this.ackError(challenge)
    const uri = `sip:${to}@${this.gateway.host}`
    this.invite(to, { authorization: authorize(picked, { username, password, method: 'INVITE', uri }) })
  }

  /** The next final (or provisional) response. */
  next(timeoutMs = 3000): Promise<SipResponse> {
    return this.responses.next(timeoutMs, 'SIP response')
  }

  /**
   * The next final response to the latest request, skipping provisionals and a final response of an earlier request
   * sent again (a 200 retransmitted before our ACK reached the gateway: a loaded machine, fast test timers).
   */
  async final(timeoutMs = 3000): Promise<SipResponse> {
    for (;;) {
      const r = await this.next(timeoutMs)
      const cseq = Number.parseInt(getHeader(r, 'CSeq') ?? '', 10)
      if (r.status >= 200 && !(cseq < this.#cseq)) return r
    }
  }

  /** ACK for an error answer (same branch as the INVITE, section 17.1.1.3). */
  ackError(response: SipResponse): void {
    this.#send(`ACK ${this.#inviteUri} SIP/2.0`, 'ACK', this.#inviteBranch, this.#cseq, [], '', getHeader(response, 'To'))
  }

  /** ACK for the 200 (a new branch), and RTP goes to the SDP answer's address from now on. */
  ack(ok: SipResponse): void {
    const to = getHeader(ok, 'To') ?? ''
    this.#toTag = /;tag=([^;]+)/.exec(to)?.[1]
    const sdp = ok.body.toString('utf8')
    const port = Number(/m=audio (\d+)/.exec(sdp)?.[1])
    const address = /c=IN IP4 (\S+)/.exec(sdp)?.[1] ?? this.gateway.host
    this.#rtpTarget = { address, port }
    this.#srtp?.answer(sdp)
    this.#learnRoute(ok)
    this.#send(
      `ACK ${this.#inDialogUri(`sip:x@${this.gateway.host}`)} SIP/2.0`,
      'ACK',
      newBranch(),
      this.#cseq,
      this.#routeHeaders(),
      '',
      to,
    )
  }

  /** ACK for a 200 that carried the gateway's offer (our INVITE had none), with our answer: PCMU and events. */
  ackWithAnswer(ok: SipResponse): void {
    const to = getHeader(ok, 'To') ?? ''
    this.#toTag = /;tag=([^;]+)/.exec(to)?.[1]
    const sdp = ok.body.toString('utf8')
    this.#rtpTarget = { address: /c=IN IP4 (\S+)/.exec(sdp)?.[1] ?? this.gateway.host, port: Number(/m=audio (\d+)/.exec(sdp)?.[1]) }
    const answer = this.#offer()
    this.#send(`ACK ${this.#inviteUri} SIP/2.0`, 'ACK', newBranch(), this.#cseq, ['Content-Type: application/sdp'], answer, to)
  }

  /** CANCEL for the INVITE in flight. */
  cancel(): void {
    this.#send(`CANCEL ${this.#inviteUri} SIP/2.0`, 'CANCEL', this.#inviteBranch, this.#cseq, [], '')
  }

  /** A re-INVITE within the dialog: `sendonly` puts the call on hold, `sendrecv` takes it off. */
  reinvite(direction: 'sendonly' | 'sendrecv'): void {
    this.#sdpVersion++
    this.#send(
      `INVITE ${this.#inviteUri} SIP/2.0`,
      'INVITE',
      newBranch(),
      ++this.#cseq,
      [`Contact: <${this.#contactUri}>`, 'Content-Type: application/sdp'],
      this.#offer(direction),
      `<${this.#inviteUri}>;tag=${this.#toTag}`,
    )
  }

  /** ACK for the 200 to a re-INVITE. */
  ackReinvite(ok: SipResponse): void {
    this.#send(`ACK ${this.#inviteUri} SIP/2.0`, 'ACK', newBranch(), this.#cseq, [], '', getHeader(ok, 'To'))
  }

  /** An UPDATE within the dialog (a session-timer refresh), without SDP. */
  update(extra: string[]): void {
    this.#send(
      `UPDATE ${this.#inviteUri} SIP/2.0`,
      'UPDATE',
      newBranch(),
      ++this.#cseq,
      extra,
      '',
      `<${this.#inviteUri}>;tag=${this.#toTag}`,
    )
  }

  /** BYE within the dialog (through the proxies of its route set, when there are any). */
  bye(): void {
    this.#send(
      `BYE ${this.#inDialogUri(`sip:x@${this.gateway.host}`)} SIP/2.0`,
      'BYE',
      newBranch(),
      ++this.#cseq,
      this.#routeHeaders(),
      '',
      `<sip:x@${this.gateway.host}>;tag=${this.#toTag}`,
    )
  }

  /**
   * Sends mu-law audio as RTP, one 160-byte packet per 20 ms of wall clock (after what is already being sent), as a
   * phone's sampling clock does: a late timer sends the packets that fell due meanwhile (a few at a time), so a
   * loaded process still says its audio in real time rather than stretching it by its timers' lateness.
   */
  speak(ulaw: Buffer): Promise<void> {
    this.#speaking = this.#speaking.then(
      () =>
        new Promise<void>((resolve) => {
          let at = 0
          let marker = true
          const start = performance.now()
          const timer = setInterval(() => {
            // Due: the packets whose 20 ms have passed (a timer may fire a millisecond or two early).
            const due = Math.floor((performance.now() - start + 2) / 20)
            for (let burst = 0; burst < MAX_CATCH_UP_PACKETS && at < ulaw.length && at / 160 < due && !this.#closed; burst++) {
              this.#rtpSend(0, ulaw.subarray(at, at + 160), marker)
              marker = false
              at += 160
              this.#rtpTs += 160
            }
            if (at >= ulaw.length || this.#closed) {
              clearInterval(timer)
              this.#timers.delete(timer)
              resolve()
            }
          }, 20)
          this.#timers.set(timer, resolve)
        }),
    )
    return this.#speaking
  }

  /** Sends one RFC 4733 digit (payload type 101) as its packets, one every 20 ms. */
  async digit(digit: string): Promise<void> {
    const packets = dtmfPackets({ digit, durationMs: 100, timestamp: this.#rtpTs, sequence: this.#rtpSeq }) ?? []
    for (const p of packets) {
      this.#rtpSend(101, p.payload, p.marker)
      await new Promise((r) => setTimeout(r, 20))
    }
    this.#rtpTs += 800
  }

  close(): Promise<void> {
    this.#closed = true
    for (const [timer, resolve] of this.#timers) {
      clearInterval(timer)
      resolve()
    }
    this.#timers.clear()
    this.stream?.destroy()
    return Promise.all([new Promise<void>((r) => this.sip.close(() => r())), new Promise<void>((r) => this.rtp.close(() => r()))]).then(
      () => undefined,
    )
  }

  #rtpSend(payloadType: number, payload: Buffer, marker: boolean): void {
    const target = this.#rtpTarget
    if (target === undefined) return
    const bytes = encodeRtp({ payloadType, payload, marker, sequence: this.#rtpSeq++, timestamp: this.#rtpTs, ssrc: 0x1234 })
    this.rtp.send(this.#srtp === undefined ? bytes : this.#srtp.protect(bytes), target.port, target.address)
  }

  #offer(direction = 'sendrecv'): string {
    return [
      'v=0',
      `o=phone 1 ${this.#sdpVersion} IN IP4 ${this.address}`,
      's=-',
      `c=IN IP4 ${this.address}`,
      't=0 0',
      `m=audio ${this.rtpPort} RTP/${this.#srtp === undefined ? 'AVP' : 'SAVP'} 0${this.#telephoneEvent ? ' 101' : ''}${this.#comfortNoise ? ' 13' : ''}`,
      'a=rtpmap:0 PCMU/8000',
      ...(this.#telephoneEvent ? ['a=rtpmap:101 telephone-event/8000', 'a=fmtp:101 0-16'] : []),
      ...(this.#comfortNoise ? ['a=rtpmap:13 CN/8000'] : []),
      'a=ptime:20',
      `a=${direction}`,
      ...this.#mediaLines,
      ...(this.#srtp === undefined ? [] : [this.#srtp.offerLine]),
      '',
    ].join('\r\n')
  }

  #send(start: string, method: string, branch: string, cseq: number, extra: string[], body: string, to?: string): void {
    const lines = [
      start,
      `Via: SIP/2.0/${this.stream === undefined ? 'UDP' : 'TLS'} ${this.address}:${this.#viaPort};branch=${branch};rport`,
      'Max-Forwards: 70',
      `From: <sip:+442071838750@${this.address}>;tag=${this.fromTag}`,
      `To: ${to ?? `<${start.split(' ')[1]}>`}`,
      `Call-ID: ${this.callId}`,
      `CSeq: ${cseq} ${method}`,
      ...extra,
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body,
    ]
    this.#wire(Buffer.from(lines.join('\r\n')))
  }

  /** Our Contact: over TLS with `;transport=tls` (RFC 3261 section 19.1.4), so the gateway's requests come on TLS. */
  get #contactUri(): string {
    return this.stream === undefined
      ? `sip:caller@${this.address}:${this.sipPort}`
      : `sip:caller@${this.address}:${this.#viaPort};transport=tls`
  }

  /**
   * RFC 3261 section 12.1.2: a proxy that record-routed stays in the dialog: the route set is the 200's
   * Record-Route in reverse, and the remote target its Contact. Without Record-Route nothing changes.
   */
  #learnRoute(ok: SipResponse): void {
    this.#routes = (getHeaderValues(ok, 'Record-Route') ?? []).reverse()
    this.#remoteTarget = /<([^>]+)>/.exec(getHeader(ok, 'Contact') ?? '')?.[1]
  }

  /** The Request-URI of a request in the dialog: the remote target behind a loose-routing proxy, else `direct`. */
  #inDialogUri(direct: string): string {
    return this.#routes.length > 0 && this.#remoteTarget !== undefined ? this.#remoteTarget : direct
  }

  #routeHeaders(): string[] {
    return this.#routes.map((r) => `Route: ${r}`)
  }

  /** The dialog's route set as learnt from the 200 (tests look at it). */
  get routes(): readonly string[] {
    return this.#routes
  }

  /** The port our Via names: the UDP socket's, or the TLS connection's. */
  get #viaPort(): number {
    return this.stream === undefined ? this.sipPort : (this.stream.localPort ?? 0)
  }

  #wire(bytes: Buffer): void {
    if (this.stream === undefined) this.sip.send(bytes, this.gateway.port, this.gateway.host)
    else this.stream.write(bytes)
  }

  #onSip(bytes: Buffer): void {
    const r = decodeSipMessage(bytes)
    if (!r.ok) return
    if (r.message.kind === 'response') {
      this.responses.push(r.message)
      return
    }
    if (r.message.method === 'BYE') {
      this.#wire(encodeSipMessage(buildResponse(r.message, 200)))
      this.byes.push(r.message)
    } else if (r.message.method !== 'ACK') this.requests.push(r.message)
  }

  /** Answers a request of the gateway's. */
  respond(request: SipRequest, status: number, headers: { name: string; value: string }[] = []): void {
    this.#wire(encodeSipMessage(buildResponse(request, status, { headers })))
  }
}

function newBranch(): string {
  return `z9hG4bK${randomBytes(6).toString('hex')}`
}
