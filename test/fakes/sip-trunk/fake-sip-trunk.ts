// Follows, as read 2026-11-29: RFC 3261 "SIP: Session Initiation Protocol" (https://www.rfc-editor.org/rfc/rfc3261,
// June 2002; messages as in section 24.2, digest as in 22.4), RFC 2617 (digest, qop=auth), RFC 3264 (offer/answer),
// RFC 4566 "SDP" (https://www.rfc-editor.org/rfc/rfc4566, July 2006; section 5), RFC 3550 (RTP) and RFC 4733
// (telephone-event, section 2.5). test/fakes-conformance/sip-trunk.test.ts replays the RFCs' example INVITE and SDP.
/**
 * A SIP trunk for tests, as a UAS over a real UDP socket: it challenges an INVITE without credentials with 407
 * (MD5 digest, qop=auth, checked here with node:crypto, not with the gateway's code), then answers as its mode
 * says: `answer` (100, 180, then 200 with a PCMU SDP answer), `busy` (486), `unavailable` (180 then 480),
 * `decline` (180 then 603) or `never` (180 and nothing more until a CANCEL: 200 to it and 487 to the INVITE). It
 * answers with PCMU or, when `codec` says so, PCMA. It
 * answers BYE with 200, sends BYE itself (`hangUp`), records every request, and once answered sends RTP from its
 * own socket (so the gateway latches): silence, what it is told to `play`, and RFC 4733 digits (`digit`, the
 * telephone-event packets of section 2.5 in the audio's slots); it records the RTP it hears. It listens on UDP
 * and on TCP (`tcpUri`; a TCP request is answered on its connection),
 * and on TLS when started with a certificate (`tlsUri`, a `sips:` URI; answered on its connection too).
 * Messages are plain RFC 3261 text.
 */
import { createHash, randomBytes } from 'node:crypto'
import { createSocket, type Socket } from 'node:dgram'
import { decodeRtp, encodeRtp } from '../../../transports/sip/media/rtp-codec.js'
import { type DtmfPacket, dtmfPackets } from '../../../transports/sip/media/dtmf-sender.js'
import { encodeAlaw } from '../../../pipeline/audio/g711-alaw.js'
import { decodeMulaw } from '../../../pipeline/audio/g711-mulaw.js'
import { createServer, type Server, type Socket as NetSocket } from 'node:net'
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls'
import { decodeSipMessage, encodeSipMessage } from '../../../transports/sip/message/sip-message-codec.js'
import { SipStreamFramer } from '../../../transports/sip/endpoint/sip-stream-framer.js'
import { getHeader, type SipRequest, type SipResponse } from '../../../transports/sip/message/sip-message.js'
import { Inbox } from '../../helpers/sip-wire.js'

/** How the trunk answers INVITEs. */
export type TrunkMode = 'answer' | 'busy' | 'unavailable' | 'decline' | 'never'

/** One RTP packet heard. */
export interface TrunkHeard {
  readonly sequence: number
  readonly payloadType: number
  readonly payload: Buffer
}

const REALM = 'trunk.test'
const md5 = (s: string) => createHash('md5').update(s).digest('hex')

/** Where a request came from, and how to answer it (the datagram's source, or the TCP connection). */
interface Peer {
  readonly address: string
  readonly port: number
  readonly transport: 'UDP' | 'TCP' | 'TLS'
  send(bytes: Buffer): void
}

function udpPeer(socket: Socket, address: string, port: number): Peer {
  return { address, port, transport: 'UDP', send: (bytes) => socket.send(bytes, port, address) }
}

/** The fake trunk. */
export class FakeSipTrunk {
  mode: TrunkMode = 'answer'
  /** The 200's Session-Expires (RFC 4028), e.g. `90;refresher=uac` to make the gateway refresh; none by default. */
  sessionExpires: string | undefined
  /** The status our in-dialog re-INVITE or UPDATE (a session refresh) gets. */
  refreshStatus = 200
  /** The codec the 200 answers with: PCMU (payload type 0) or PCMA (8; what it plays is converted to A-law). */
  codec: 'PCMU' | 'PCMA' = 'PCMU'
  readonly requests = new Inbox<SipRequest>()
  /** Answers to the trunk's own requests (BYE, re-INVITE). */
  readonly responses = new Inbox<SipResponse>()
  /** Every request received, in order (the inbox is consumed by tests). */
  readonly log: SipRequest[] = []
  readonly heard: TrunkHeard[] = []
  #nonce = randomBytes(8).toString('hex')
  #calls = new Map<string, { invite: SipRequest; from: Peer; toTag: string; rtpTarget?: { address: string; port: number } }>()
  #rtpTimer: NodeJS.Timeout | undefined
  #cseq = 10
  /** What the callee sends next, one item per 20 ms slot, in place of silence: audio frames and digits. */
  #playing: ({ kind: 'audio'; payload: Buffer } | { kind: 'digit'; digit: string })[] = []

  private constructor(
    readonly sip: Socket,
    readonly rtp: Socket,
    readonly tcp: Server,
    readonly credentials: { username: string; password: string },
    readonly tls?: TlsServer,
  ) {
    const serve = (socket: NetSocket, transport: 'TCP' | 'TLS') => {
      const framer = new SipStreamFramer()
      const peer: Peer = {
        address: socket.remoteAddress ?? '',
        port: socket.remotePort ?? 0,
        transport,
        send: (b) => void socket.write(b),
      }
      socket.on('error', () => socket.destroy())
      socket.on('data', (chunk) => {
        for (const r of framer.push(chunk)) if (r.ok) this.#onSip(encodeSipMessage(r.message), peer, 'stream')
      })
    }
    tcp.on('connection', (socket) => serve(socket, 'TCP'))
    tls?.on('secureConnection', (socket) => serve(socket, 'TLS'))
    tls?.on('tlsClientError', () => undefined)
    sip.on('message', (bytes, from) => this.#onSip(bytes, udpPeer(sip, from.address, from.port)))
    rtp.on('message', (bytes) => {
      const d = decodeRtp(bytes)
      if (d.kind === 'rtp') this.heard.push({ sequence: d.packet.sequence, payloadType: d.packet.payloadType, payload: d.packet.payload })
    })
  }

  /** Starts the trunk; with `tls` (PEM certificate and key) it also listens for TLS. */
  static async start(credentials: { username: string; password: string }, tls?: { cert: string; key: string }): Promise<FakeSipTrunk> {
    const bind = async () => {
      const s = createSocket('udp4')
      await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', resolve))
      return s
    }
    const sip = await bind()
    const tcp = createServer()
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject)
      tcp.listen(0, '127.0.0.1', resolve)
    })
    const secure = tls === undefined ? undefined : createTlsServer(tls)
    if (secure !== undefined) await new Promise<void>((resolve) => secure.listen(0, '127.0.0.1', resolve))
    return new FakeSipTrunk(sip, await bind(), tcp, credentials, secure)
  }

  /** The trunk's outbound URI as a trunk row stores it. */
  get uri(): string {
    return `sip:127.0.0.1:${this.sip.address().port}`
  }

  /** The same trunk over TCP (its own port). */
  get tcpUri(): string {
    return `sip:127.0.0.1:${(this.tcp.address() as { port: number }).port};transport=tcp`
  }

  /** The same trunk over TLS: a `sips:` URI (started with a certificate only). */
  get tlsUri(): string {
    if (this.tls === undefined) throw new Error('the trunk was started without TLS')
    return `sips:127.0.0.1:${(this.tls.address() as { port: number }).port}`
  }

  /** Sends BYE in the call's dialog to the gateway's Contact (here: where its INVITE came from). */
  hangUp(callId: string): void {
    const call = this.#calls.get(callId)
    if (call === undefined) throw new Error(`no call ${callId}`)
    const inv = call.invite
    const lines = [
      `BYE sip:gateway@${call.from.address}:${call.from.port} SIP/2.0`,
      `Via: SIP/2.0/${call.from.transport} 127.0.0.1:${this.sip.address().port};branch=z9hG4bK${randomBytes(6).toString('hex')};rport`,
      'Max-Forwards: 70',
      `From: ${getHeader(inv, 'To')};tag=${call.toTag}`,
      `To: ${getHeader(inv, 'From')}`,
      `Call-ID: ${callId}`,
      `CSeq: ${++this.#cseq} BYE`,
    ]
    this.#send(lines, '', call.from)
  }

  /** The callee speaks: mu-law 8 kHz, sent as 20 ms frames from the next slot on. */
  play(mulaw: Buffer): void {
    for (let at = 0; at + 160 <= mulaw.length; at += 160) this.#playing.push({ kind: 'audio', payload: mulaw.subarray(at, at + 160) })
  }

  /** The callee presses `digit`: RFC 4733 events (payload type 101, 100 ms) after what is queued to play. */
  digit(digit: string): void {
    this.#playing.push({ kind: 'digit', digit })
  }

  /** A re-INVITE in the call's dialog: `hold` offers sendonly, `none` has no offer (it wants ours). */
  reinvite(callId: string, offer: 'hold' | 'none'): void {
    const call = this.#calls.get(callId)
    if (call === undefined) throw new Error(`no call ${callId}`)
    const inv = call.invite
    const port = this.rtp.address().port
    const sdp = ['v=0', 'o=trunk 1 2 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${port} RTP/AVP 0 101`]
    const body =
      offer === 'none' ? '' : [...sdp, 'a=rtpmap:0 PCMU/8000', 'a=rtpmap:101 telephone-event/8000', 'a=sendonly', ''].join('\r\n')
    const lines = [
      `INVITE sip:gateway@${call.from.address}:${call.from.port} SIP/2.0`,
      `Via: SIP/2.0/${call.from.transport} 127.0.0.1:${this.sip.address().port};branch=z9hG4bK${randomBytes(6).toString('hex')};rport`,
      'Max-Forwards: 70',
      `From: ${getHeader(inv, 'To')};tag=${call.toTag}`,
      `To: ${getHeader(inv, 'From')}`,
      `Call-ID: ${callId}`,
      `CSeq: ${++this.#cseq} INVITE`,
      `Contact: <sip:trunk@127.0.0.1:${this.sip.address().port}>`,
      ...(body === '' ? [] : ['Content-Type: application/sdp']),
    ]
    this.#send(lines, body, call.from)
  }

  close(): void {
    clearInterval(this.#rtpTimer)
    this.sip.close()
    this.rtp.close()
    this.tcp.close()
    this.tls?.close()
  }

  #onSip(bytes: Buffer, from: Peer, framing: 'datagram' | 'stream' = 'datagram'): void {
    const decoded = decodeSipMessage(bytes, { framing })
    if (decoded.ok && decoded.message.kind === 'response') return this.#onResponse(decoded.message)
    if (!decoded.ok || decoded.message.kind !== 'request') return
    const request = decoded.message
    this.log.push(request)
    this.requests.push(request)
    const callId = getHeader(request, 'Call-ID') ?? ''
    const inDialog = /;\s*tag=/.test(getHeader(request, 'To') ?? '') && this.#calls.has(callId)
    switch (request.method) {
      case 'INVITE':
        return inDialog ? this.#refresh(request, from) : this.#invite(request, callId, from)
      case 'UPDATE':
        return inDialog ? this.#refresh(request, from) : this.#respond(request, 481, 'Call/Transaction Does Not Exist', from)
      case 'CANCEL': {
        this.#respond(request, 200, 'OK', from)
        const call = this.#calls.get(callId)
        if (call !== undefined) this.#respond(call.invite, 487, 'Request Terminated', from, call.toTag)
        return
      }
      case 'BYE':
        clearInterval(this.#rtpTimer)
        return this.#respond(request, 200, 'OK', from)
      default:
        return
    }
  }

  /** Records an answer; a 2xx to our re-INVITE is ACKed (section 13.2.2.4). */
  #onResponse(response: SipResponse): void {
    this.responses.push(response)
    const cseq = getHeader(response, 'CSeq') ?? ''
    const call = this.#calls.get(getHeader(response, 'Call-ID') ?? '')
    if (call === undefined || !cseq.endsWith('INVITE') || response.status < 200 || response.status >= 300) return
    const lines = [
      `ACK sip:gateway@${call.from.address}:${call.from.port} SIP/2.0`,
      `Via: SIP/2.0/${call.from.transport} 127.0.0.1:${this.sip.address().port};branch=z9hG4bK${randomBytes(6).toString('hex')};rport`,
      'Max-Forwards: 70',
      `From: ${getHeader(response, 'From')}`,
      `To: ${getHeader(response, 'To')}`,
      `Call-ID: ${getHeader(response, 'Call-ID')}`,
      `CSeq: ${cseq.split(' ')[0]} ACK`,
    ]
    this.#send(lines, '', call.from)
  }

  /** A session refresh of the gateway's: `refreshStatus`, a 2xx with our Session-Expires (and SDP for a re-INVITE). */
  #refresh(request: SipRequest, from: Peer): void {
    if (this.refreshStatus >= 300) return this.#respond(request, this.refreshStatus, 'Refused', from)
    const timer = this.sessionExpires === undefined ? [] : [`Session-Expires: ${this.sessionExpires}`, 'Require: timer']
    if (request.method !== 'INVITE') return this.#respond(request, 200, 'OK', from, undefined, timer)
    const sdp = this.#sdp(2)
    this.#respond(request, 200, 'OK', from, undefined, [...timer, 'Content-Type: application/sdp'], sdp)
  }

  /** Our SDP at `version`, in the codec the trunk answers with. */
  #sdp(version: number): string {
    const rtpPort = this.rtp.address().port
    const pt = this.codec === 'PCMA' ? 8 : 0
    const sdp = [
      'v=0',
      `o=trunk 1 ${version} IN IP4 127.0.0.1`,
      's=-',
      'c=IN IP4 127.0.0.1',
      't=0 0',
      `m=audio ${rtpPort} RTP/AVP ${pt} 101`,
    ]
    return [...sdp, `a=rtpmap:${pt} ${this.codec}/8000`, 'a=rtpmap:101 telephone-event/8000', 'a=ptime:20', 'a=sendrecv', ''].join('\r\n')
  }

  #invite(invite: SipRequest, callId: string, from: Peer): void {
    const auth = getHeader(invite, 'Proxy-Authorization')
    if (auth === undefined || !this.#checkDigest(auth)) {
      const challenge = `Digest realm="${REALM}", nonce="${this.#nonce}", algorithm=MD5, qop="auth"`
      return this.#respond(invite, 407, 'Proxy Authentication Required', from, randomBytes(4).toString('hex'), [
        `Proxy-Authenticate: ${challenge}`,
      ])
    }
    const toTag = randomBytes(4).toString('hex')
    const offer = invite.body.toString('utf8')
    const port = /m=audio (\d+)/.exec(offer)?.[1]
    const address = /c=IN IP4 (\S+)/.exec(offer)?.[1]
    this.#calls.set(callId, { invite, from, toTag, ...(port && address && { rtpTarget: { address, port: Number(port) } }) })
    this.#respond(invite, 100, 'Trying', from)
    if (this.mode === 'busy') return this.#respond(invite, 486, 'Busy Here', from, toTag)
    this.#respond(invite, 180, 'Ringing', from, toTag)
    if (this.mode === 'never') return
    if (this.mode === 'unavailable') return this.#respond(invite, 480, 'Temporarily Unavailable', from, toTag)
    if (this.mode === 'decline') return this.#respond(invite, 603, 'Decline', from, toTag)
    const body = this.#sdp(1)
    this.#respond(
      invite,
      200,
      'OK',
      from,
      toTag,
      [
        `Contact: <sip:trunk@127.0.0.1:${this.sip.address().port}>`,
        'Record-Route: <sip:sbc.trunk.test;lr>',
        ...(this.sessionExpires === undefined ? [] : [`Session-Expires: ${this.sessionExpires}`, 'Require: timer']),
        'Content-Type: application/sdp',
      ],
      body,
    )
    this.#startRtp(callId)
  }

  /** The callee goes silent on the wire (no more RTP; the fake sends no RTCP), as a far end that vanished. */
  stopRtp(): void {
    clearInterval(this.#rtpTimer)
  }

  /** RFC 2617/7616 with qop=auth, MD5: response = MD5(HA1:nonce:nc:cnonce:auth:HA2). */
  #checkDigest(header: string): boolean {
    const param = (name: string) => new RegExp(`${name}="?([^",]+)"?`).exec(header)?.[1]
    const { username, password } = this.credentials
    if (param('username') !== username || param('nonce') !== this.#nonce) return false
    const ha1 = md5(`${username}:${REALM}:${password}`)
    const ha2 = md5(`INVITE:${param('uri')}`)
    return param('response') === md5(`${ha1}:${this.#nonce}:${param('nc')}:${param('cnonce')}:auth:${ha2}`)
  }

  /**
   * Caller-side RTP every 20 ms (speech-like bytes), so the gateway hears someone and latches to us. The packets
   * keep to the wall clock, as a trunk on another machine does: a tick that comes late (this process shares its
   * event loop with the gateway under test) sends every packet due since, instead of falling behind real time and
   * leaving the gateway's jitter buffer to run dry in the middle of what the callee says.
   */
  #startRtp(callId: string): void {
    const target = this.#calls.get(callId)?.rtpTarget
    if (target === undefined) return
    let seq = 0
    /** The telephone-event packets of the digit being sent, in order (each takes one slot). */
    let event: DtmfPacket[] = []
    clearInterval(this.#rtpTimer)
    const alaw = this.codec === 'PCMA'
    const startAt = performance.now()
    const sendOne = () => {
      const next = event.length === 0 ? this.#playing.shift() : undefined
      if (next?.kind === 'digit') {
        // Section 2.5.1: every packet of the event carries its start timestamp; the audio's clock runs on meanwhile.
        event = dtmfPackets({ digit: next.digit, timestamp: seq * 160, sequence: seq, durationMs: 100 }) ?? []
      }
      const packet = event.shift()
      const bytes =
        packet === undefined
          ? encodeRtp({
              payloadType: alaw ? 8 : 0,
              sequence: seq & 0xffff,
              timestamp: seq * 160,
              ssrc: 99,
              payload: audioPayload(next?.kind === 'audio' ? next.payload : Buffer.alloc(160, 0xff), alaw),
            })
          : encodeRtp({
              payloadType: 101,
              marker: packet.marker,
              sequence: packet.sequence,
              timestamp: packet.timestamp,
              ssrc: 99,
              payload: packet.payload,
            })
      seq++
      this.rtp.send(bytes, target.port, target.address)
    }
    this.#rtpTimer = setInterval(() => {
      const due = Math.floor((performance.now() - startAt) / 20)
      while (seq < due) sendOne()
    }, 20)
    this.#rtpTimer.unref()
  }

  #respond(request: SipRequest, status: number, reason: string, to: Peer, toTag?: string, extra: string[] = [], body = ''): void {
    const toValue = getHeader(request, 'To') ?? ''
    const lines = [
      `SIP/2.0 ${status} ${reason}`,
      ...request.headers.filter((h) => h.name.toLowerCase() === 'via').map((h) => `Via: ${h.value}`),
      `From: ${getHeader(request, 'From')}`,
      `To: ${toTag === undefined || toValue.includes('tag=') ? toValue : `${toValue};tag=${toTag}`}`,
      `Call-ID: ${getHeader(request, 'Call-ID')}`,
      `CSeq: ${getHeader(request, 'CSeq')}`,
      ...extra,
    ]
    this.#send(lines, body, to)
  }

  #send(lines: string[], body: string, to: Peer): void {
    const text = `${[...lines, `Content-Length: ${Buffer.byteLength(body)}`].join('\r\n')}\r\n\r\n${body}`
    to.send(Buffer.from(text))
  }
}

/** A mu-law frame as the trunk's codec sends it. */
function audioPayload(mulaw: Buffer, alaw: boolean): Buffer {
  return alaw ? Buffer.from(encodeAlaw(decodeMulaw(mulaw))) : mulaw
}
