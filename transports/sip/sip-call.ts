/**
 * One inbound call as the UAS sees it (RFC 3261 sections 12 to 15): ringing until its 200, then a dialog with our
 * tag, the peer's tag and our own CSeq space. It answers the INVITE through its server transaction (the 200 is
 * retransmitted until the ACK), takes a CANCEL before the 200 (487), answers re-INVITEs (hold and unhold), and
 * ends either way: the peer's BYE, or ours when the session ends by itself. Its media and transport are
 * attached once the session exists; whichever way it ends, the RTP port is freed once.
 */
import type { EndReason } from '../../core/end-reason.js'
import { type ClientTransactionTable, type ClientWire, newBranch } from './client-transaction-table.js'
import type { InviteServerTransaction } from './invite-transactions.js'
import type { RtpMedia } from './rtp-media.js'
import { answerOffer, type LocalMedia, readAnswer } from './sdp-offer-answer.js'
import type { SipCallTransport } from './sip-call-transport.js'
import { getHeader, type SipHeader, type SipRequest, type SipResponse } from './sip-message.js'
import { buildResponse } from './sip-response.js'
import { parseCSeq } from './sip-uri-codec.js'

/** Where a call is. */
export type SipCallState = 'ringing' | 'answered' | 'confirmed' | 'ended'

/** What a call is given. */
export interface SipCallOptions {
  readonly invite: SipRequest
  /** The INVITE's transaction key, which a CANCEL for it carries. */
  readonly inviteKey: string
  /** The INVITE's server transaction; null when it was answered statelessly (a full table). */
  readonly tx: InviteServerTransaction | null
  /** Sends a response to the INVITE when there is no transaction. */
  readonly respond: (response: SipResponse) => void
  readonly localTag: string
  /** Our Contact URI (SIP_PUBLIC_HOST). */
  readonly contact: string
  /** Our Via sent-by for requests we send (host:port, transport). */
  readonly via: { readonly host: string; readonly port: number; readonly transport: 'UDP' | 'TCP' }
  /** How our requests reach the peer: where its INVITE came from. */
  readonly wire: ClientWire
  readonly clients: ClientTransactionTable
  /** Told once when the call is over, for any reason (the endpoint forgets it). */
  readonly onEnded: () => void
}

/** One inbound SIP call. */
export class SipCall {
  readonly #o: SipCallOptions
  #state: SipCallState = 'ringing'
  #cancelled = false
  #cseq = 0
  #media: RtpMedia | undefined
  #transport: SipCallTransport | undefined
  #local: LocalMedia | undefined
  /** Our 200 carried the offer: the ACK carries the answer, and the media starts with it. */
  #awaitingAnswer = false
  /** The last re-INVITE answered 200, whose ACK (same CSeq number) stops its retransmissions. */
  #reinvite: { cseq: number; tx: InviteServerTransaction } | undefined

  constructor(options: SipCallOptions) {
    this.#o = options
  }

  get state(): SipCallState {
    return this.#state
  }

  get inviteKey(): string {
    return this.#o.inviteKey
  }

  get localTag(): string {
    return this.#o.localTag
  }

  get callId(): string {
    return getHeader(this.#o.invite, 'Call-ID') ?? ''
  }

  /** True once a CANCEL stopped the call before its 200. */
  get cancelled(): boolean {
    return this.#cancelled
  }

  /** Answers the INVITE with a final refusal (ringing calls only). */
  refuse(status: number, reason: string, headers: readonly SipHeader[] = []): void {
    if (this.#state !== 'ringing') return
    this.#respond(buildResponse(this.#o.invite, status, { toTag: this.localTag, reason, headers }))
    this.#end()
  }

  /** A CANCEL before the 200: the INVITE gets 487 and the call is over. False when it was already answered. */
  cancel(): boolean {
    if (this.#state !== 'ringing') return false
    this.#cancelled = true
    this.refuse(487, 'Request Terminated')
    return true
  }

  /**
   * Answers 200 with our SDP; the media clock starts and the session hears the caller from now on. With
   * `offered` our SDP is an offer (the INVITE had none) and the media waits for the answer in the ACK.
   */
  answer(media: RtpMedia, transport: SipCallTransport, local: LocalMedia, sdp: string, offered = false): void {
    this.#media = media
    this.#transport = transport
    this.#local = local
    if (this.#state !== 'ringing') return this.#teardown()
    this.#state = 'answered'
    this.#respond(
      buildResponse(this.#o.invite, 200, {
        toTag: this.localTag,
        headers: [
          { name: 'Contact', value: `<${this.#o.contact}>` },
          { name: 'Content-Type', value: 'application/sdp' },
        ],
        body: Buffer.from(sdp),
      }),
    )
    this.#awaitingAnswer = offered
    if (!offered) media.start()
  }

  /**
   * The ACK of our 200: its retransmissions stop. When our 200 carried the offer, the ACK must carry the answer:
   * the media starts with it, and a missing or unusable one ends the call with a BYE (RFC 3261 section 13.3.1.4).
   */
  ack(request: SipRequest): void {
    const cseq = cseqNumber(request)
    if (this.#reinvite !== undefined && cseq === this.#reinvite.cseq) {
      this.#reinvite.tx.receiveAck(request)
      this.#reinvite = undefined
      return
    }
    this.#o.tx?.receiveAck(this.#o.invite)
    if (this.#state !== 'answered') return
    this.#state = 'confirmed'
    if (!this.#awaitingAnswer) return
    this.#awaitingAnswer = false
    const answer = readAnswer(request.body.toString('utf8'), ['PCMU'])
    if (!answer.ok) {
      this.#transport?.peerEnded('error')
      this.hangUp('error')
      return
    }
    this.#media?.update(answer.audio)
    this.#media?.start()
  }

  /** Our 200 was never acknowledged (timer L): the dialog is ended with a BYE, and so is the session. */
  noAck(): void {
    if (this.#state !== 'answered') return
    this.#transport?.peerEnded('client_disconnected')
    this.hangUp('client_disconnected')
  }

  /** The peer's BYE: 200 (by the caller), and the session ends as a caller hang-up. */
  peerBye(): void {
    if (this.#state === 'ended') return
    this.#transport?.peerEnded('caller_hangup')
    this.#teardown()
  }

  /** A re-INVITE: the new offer is answered with our SDP (a new version); hold sends the caller nothing. */
  reinvite(request: SipRequest, tx: InviteServerTransaction | null): SipResponse {
    const local = this.#local
    const media = this.#media
    if (local === undefined || media === undefined || this.#state === 'ended') return buildResponse(request, 481)
    const next = { ...local, sessionVersion: local.sessionVersion + 1 }
    const answered = answerOffer(request.body.toString('utf8'), next)
    if (!answered.ok) return buildResponse(request, 488, { headers: [{ name: 'Warning', value: answered.warning }] })
    this.#local = next
    media.update(answered.audio)
    this.#transport?.setCodec(answered.audio.codec)
    this.#transport?.setHeld(answered.audio.held)
    const cseq = cseqNumber(request)
    this.#reinvite = tx === null || cseq === undefined ? undefined : { cseq, tx }
    return buildResponse(request, 200, {
      headers: [
        { name: 'Contact', value: `<${this.#o.contact}>` },
        { name: 'Content-Type', value: 'application/sdp' },
      ],
      body: Buffer.from(answered.answer),
    })
  }

  /** The session ended by itself (agent hang-up, limits, shutdown): BYE to the peer, then the port is freed. */
  hangUp(_reason: EndReason): void {
    if (this.#state === 'ended') return
    if (this.#state === 'ringing') return this.refuse(480, 'Temporarily Unavailable')
    const { request, branch } = this.#bye()
    this.#o.clients.send(request, branch, this.#o.wire)
    this.#teardown()
  }

  /** Ends the call without a word to the peer (the endpoint closes). */
  drop(): void {
    this.#teardown()
  }

  /** Our BYE within the dialog (section 15.1.1): From is the INVITE's To with our tag, To its From. */
  #bye(): { request: SipRequest; branch: string } {
    const inv = this.#o.invite
    const branch = newBranch()
    const contact = getHeader(inv, 'Contact')
    // The remote target is the INVITE's Contact (section 12.1.1); without a usable one, its Request-URI.
    const uri = (contact === undefined ? '' : contactUri(contact)) || inv.uri
    const { host, port, transport } = this.#o.via
    const headers: SipHeader[] = [
      { name: 'Via', value: `SIP/2.0/${transport} ${host.includes(':') ? `[${host}]` : host}:${port};branch=${branch};rport` },
      { name: 'Max-Forwards', value: '70' },
      { name: 'From', value: `${getHeader(inv, 'To') ?? ''};tag=${this.localTag}` },
      { name: 'To', value: getHeader(inv, 'From') ?? '' },
      { name: 'Call-ID', value: this.callId },
      { name: 'CSeq', value: `${++this.#cseq} BYE` },
    ]
    return { request: { kind: 'request', method: 'BYE', uri, headers, body: Buffer.alloc(0) }, branch }
  }

  #respond(response: SipResponse): void {
    if (this.#o.tx === null) this.#o.respond(response)
    else this.#o.tx.respond(response)
  }

  #teardown(): void {
    this.#media?.close()
    this.#end()
  }

  #end(): void {
    if (this.#state === 'ended') return
    this.#state = 'ended'
    this.#o.onEnded()
  }
}

/** A request's CSeq number. */
function cseqNumber(request: SipRequest): number | undefined {
  return parseCSeq(getHeader(request, 'CSeq') ?? '')?.seq
}

/** The URI inside a Contact value (`<sip:...>;params` or a bare addr-spec). */
function contactUri(value: string): string {
  const m = /<([^>]*)>/.exec(value)
  const uri = (m?.[1] ?? value.split(';')[0] ?? '').trim()
  return /^sips?:/i.test(uri) ? uri : ''
}
