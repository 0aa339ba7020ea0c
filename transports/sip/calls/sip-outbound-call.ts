/**
 * One outbound call as the UAC sees it (RFC 3261 sections 12 to 15): our INVITE with the SDP offer goes to the
 * trunk through an INVITE client transaction; a 401/407 is answered once with digest (a new INVITE, CSeq up by
 * one, the same Call-ID and From tag); a 1xx is progress; a 2xx is acknowledged (ACK to its Contact, with its
 * Record-Route as our route set), its SDP
 * answer starts the media, and the dialog is ours until a BYE either way; a 3xx-6xx or timer B ends the
 * attempt. `cancel()` before the answer sends CANCEL once a provisional response came (section 9.1), and a 2xx
 * that crosses it is acknowledged and ended with a BYE. A 200 that makes us the session refresher (RFC 4028) gets
 * our refreshes; the trunk's own renew its deadline. The media and transport are built by the owner.
 */
import type { EndReason } from '../../../core/end-reason.js'
import { authorize, type DigestCredentials, pickChallenge } from './digest-auth.js'
import { type ClientTransactionTable, type ClientWire, newBranch } from '../transactions/client-transaction-table.js'
import type { InviteClientTransaction, InviteServerTransaction } from '../transactions/invite-transactions.js'
import type { RtpMedia } from '../media/rtp-media.js'
import { answerOffer, type LocalMedia, type NegotiatedAudio, readAnswer } from '../media/sdp-offer-answer.js'
import { sdpOf } from '../message/sdp-body.js'
import type { SipCallTransport } from './sip-call-transport.js'
import { allowedMethods, getHeader, getHeaderValues, type SipHeader, type SipRequest, type SipResponse } from '../message/sip-message.js'
import { buildResponse } from '../message/sip-response.js'
import { parseCSeq } from '../message/sip-uri-codec.js'
import { CallSessionTimer, planAfterRefresh } from './call-session-timer.js'
import { nextSdpVersion, REFRESH_RETRY_MS, sendRefresh } from './session-refresh.js'
import { MIN_SESSION_EXPIRES } from './session-timer.js'
import type { TimerScheduler } from '../timer-scheduler.js'
import { toTagOf, uacRequest, uacRouteSet, viaBranch } from './uac-dialog.js'
import { contactUri } from './uas-dialog.js'

/** How long after our CANCEL an INVITE still unanswered is given up (64*T1). */
const CANCEL_GIVE_UP_MS = 32_000

/** Why an attempt ended without an answer. */
export type SipDialFailure =
  | { readonly kind: 'rejected'; readonly status: number; readonly reason: string }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'bad_answer'; readonly reason: string }

/** What the call tells its owner. */
export interface SipOutboundCallEvents {
  /** A provisional response other than 100 (180 Ringing, 183 Session Progress), with its SDP ('' without one). */
  readonly onProgress: (status: number, sdp: string) => void
  /** The 200 came with a usable answer (and the callee's `Allow`, if any); the owner builds the media and the session on it. */
  readonly onAnswered: (audio: NegotiatedAudio, peerAllows: readonly string[] | undefined) => void
  /** The attempt ended without a dialog. Told once, and never after `onAnswered`. */
  readonly onFailed: (failure: SipDialFailure) => void
  /** Told once when the call is over, for any reason (the endpoint forgets it). */
  readonly onEnded: () => void
}

/** What a call is given. */
export interface SipOutboundCallOptions {
  /** The Request-URI: the callee at the trunk. */
  readonly target: string
  /** From and To as name-addr, without tags. */
  readonly from: string
  readonly to: string
  readonly callId: string
  readonly localTag: string
  readonly contact: string
  readonly via: { readonly host: string; readonly port: number; readonly transport: 'UDP' | 'TCP' | 'TLS' }
  readonly credentials?: { readonly username: string; readonly password: string } | undefined
  readonly local: LocalMedia
  readonly offer: string
  readonly wire: ClientWire
  readonly clients: ClientTransactionTable
  /** The endpoint's timers (the session timer). */
  readonly timers: TimerScheduler
  readonly events: SipOutboundCallEvents
}

/** Where an outbound call is. */
export type SipOutboundState = 'calling' | 'confirmed' | 'ended'

/** One outbound SIP call. */
export class SipOutboundCall {
  readonly #o: SipOutboundCallOptions
  #state: SipOutboundState = 'calling'
  #cseq = 1
  #invite: { request: SipRequest; branch: string; tx: InviteClientTransaction | null } | undefined
  #authorized = false
  #provisional = false
  #cancelWanted = false
  #cancelSent = false
  #remoteTag: string | undefined
  #remoteTarget: string | undefined
  #ack: SipRequest | undefined
  #media: RtpMedia | undefined
  #transport: SipCallTransport | undefined
  #local: LocalMedia
  /** Our SDP as last sent (the offer, then each answer to a re-offer). */
  #sdp: string
  #reinvite: { cseq: number; tx: InviteServerTransaction } | undefined
  #cancelTimer: NodeJS.Timeout | undefined
  /** The dialog's route set (Record-Route of the 2xx, reversed). */
  #routes: string[] = []
  /** The 200's Allow listed UPDATE: our session refreshes use it. */
  #peerAllowsUpdate = false
  /** RFC 4028: our refresh when the 200 made us the refresher (`refresher=uac`), else the trunk's deadline. */
  readonly #sessionTimer: CallSessionTimer

  constructor(options: SipOutboundCallOptions) {
    this.#o = options
    this.#local = options.local
    this.#sdp = options.offer
    this.#sessionTimer = new CallSessionTimer(options.timers, { onExpired: () => this.#expired(), onRefresh: (s) => this.#refresh(s) })
  }

  get state(): SipOutboundState {
    return this.#state
  }

  get callId(): string {
    return this.#o.callId
  }

  get localTag(): string {
    return this.#o.localTag
  }

  /** Sends the INVITE. */
  start(): void {
    this.#send([])
  }

  /** The owner's media and transport for the answered call: they run until a BYE either way. */
  attach(media: RtpMedia, transport: SipCallTransport): void {
    this.#media = media
    this.#transport = transport
    if (this.#state === 'ended') media.close()
  }

  /** The session gave up before the answer: CANCEL (at once, or when the first provisional response comes). */
  cancel(): void {
    if (this.#state !== 'calling') return
    this.#cancelWanted = true
    if (this.#provisional) this.#sendCancel()
  }

  /** The session ended by itself: BYE in the dialog; before the answer, CANCEL. */
  hangUp(_reason?: EndReason): void {
    if (this.#state === 'calling') return this.cancel()
    if (this.#state !== 'confirmed') return
    this.#sendBye()
    this.#teardown()
  }

  /** The peer's BYE (answered 200 by the handler): the session ends as the callee's hang-up. */
  peerBye(): void {
    if (this.#state === 'ended') return
    this.#transport?.peerEnded('caller_hangup')
    this.#teardown()
  }

  /** The ACK of a re-INVITE's 200 stops its retransmissions. */
  ack(request: SipRequest): void {
    const cseq = parseCSeq(getHeader(request, 'CSeq') ?? '')?.seq
    if (this.#reinvite !== undefined && cseq === this.#reinvite.cseq) {
      this.#reinvite.tx.receiveAck(request)
      this.#reinvite = undefined
    }
  }

  /** Our 200 is never owed an ACK on an outbound call. */
  noAck(): void {}

  /** A re-INVITE from the callee (hold, unhold, a new address): answered with our SDP. */
  reinvite(request: SipRequest, tx: InviteServerTransaction | null): SipResponse {
    const response = this.update(request)
    const cseq = parseCSeq(getHeader(request, 'CSeq') ?? '')?.seq
    if (response.status === 200 && tx !== null && cseq !== undefined) this.#reinvite = { cseq, tx }
    return response
  }

  /** An UPDATE or re-INVITE: a new offer is answered, none gets our current SDP. */
  update(request: SipRequest): SipResponse {
    if (this.#state !== 'confirmed' || this.#media === undefined) return buildResponse(request, 481)
    const timer = CallSessionTimer.negotiate(request)
    if (!timer.ok) return buildResponse(request, timer.status, { reason: timer.reason, headers: timer.headers })
    const response = this.#modify(request, this.#media)
    if (response.status !== 200) return response
    this.#sessionTimer.arm(timer.plan)
    return { ...response, headers: [...response.headers, ...timer.headers] }
  }

  #modify(request: SipRequest, media: RtpMedia): SipResponse {
    const next = { ...this.#local, sessionVersion: this.#local.sessionVersion + 1 }
    // A re-INVITE without an offer wants ours in the 200 (section 14.2): our current SDP, so its answer (in the
    // ACK, not read) changes nothing. An UPDATE without one is a session refresh.
    const offer = sdpOf(request)
    if (offer === '') return request.method === 'INVITE' ? this.#withSdp(request, this.#sdp) : buildResponse(request, 200)
    const answered = answerOffer(offer, next)
    if (!answered.ok) return buildResponse(request, 488, { headers: [{ name: 'Warning', value: answered.warning }] })
    this.#local = next
    this.#sdp = answered.answer
    media.update(answered.audio)
    this.#transport?.setCodec(answered.audio.codec)
    this.#transport?.setHeld(answered.audio.held)
    return this.#withSdp(request, answered.answer)
  }

  #withSdp(request: SipRequest, sdp: string): SipResponse {
    return buildResponse(request, 200, {
      headers: [
        { name: 'Contact', value: `<${this.#o.contact}>` },
        { name: 'Content-Type', value: 'application/sdp' },
      ],
      body: Buffer.from(sdp),
    })
  }

  /** The endpoint closes: a call still ringing gets its CANCEL sent once; otherwise no word to the peer. */
  drop(): void {
    if (this.#state === 'calling' && this.#provisional) this.#sendCancel()
    this.#teardown()
  }

  #send(extra: SipHeader[]): void {
    const branch = newBranch()
    const request = this.#request('INVITE', this.#o.target, branch, this.#cseq, [
      { name: 'Contact', value: `<${this.#o.contact}>` },
      { name: 'Content-Type', value: 'application/sdp' },
      // A trunk that wants session timers may make us the refresher (RFC 4028 section 7.1).
      { name: 'Supported', value: 'timer' },
      ...extra,
    ])
    const invite = { request: { ...request, body: Buffer.from(this.#o.offer) }, branch, tx: null as InviteClientTransaction | null }
    this.#invite = invite
    invite.tx = this.#o.clients.sendInvite(invite.request, branch, this.#o.wire, {
      onResponse: (r) => {
        if (this.#invite === invite) this.#onResponse(r)
      },
      onTimeout: () => {
        if (this.#invite === invite) this.#fail({ kind: 'timeout' })
      },
    })
    if (invite.tx === null) this.#fail({ kind: 'rejected', status: 503, reason: 'too many calls' })
  }

  #onResponse(r: SipResponse): void {
    if (r.status < 200) {
      if (r.status === 100) return
      this.#provisional = true
      if (this.#cancelWanted && !this.#cancelSent) this.#sendCancel()
      if (this.#state === 'calling' && !this.#cancelWanted) this.#o.events.onProgress(r.status, sdpOf(r))
      return
    }
    if (r.status < 300) return this.#answered(r)
    if ((r.status === 401 || r.status === 407) && !this.#authorized && !this.#cancelWanted && this.#retryWithDigest(r)) return
    if (this.#cancelWanted && r.status === 487) return this.#fail({ kind: 'cancelled' })
    this.#fail({ kind: 'rejected', status: r.status, reason: r.reason })
  }

  /** Answers the challenge once; false when it cannot be answered (no credentials, no usable challenge). */
  #retryWithDigest(r: SipResponse): boolean {
    const credentials = this.#o.credentials
    const header = r.status === 401 ? 'WWW-Authenticate' : 'Proxy-Authenticate'
    const challenge = pickChallenge(getHeaderValues(r, header) ?? [])
    if (credentials === undefined || challenge === null) return false
    this.#authorized = true
    this.#cseq++
    const answer: DigestCredentials = { ...credentials, method: 'INVITE', uri: this.#o.target }
    this.#send([{ name: r.status === 401 ? 'Authorization' : 'Proxy-Authorization', value: authorize(challenge, answer) }])
    return true
  }

  #answered(r: SipResponse): void {
    const tag = toTagOf(r)
    if (this.#state !== 'calling') {
      // A retransmitted 2xx (our ACK was lost) of the dialog we have: ACK again. Another fork's: ignored.
      if (this.#ack !== undefined && tag === this.#remoteTag) this.#o.wire.send(this.#ack)
      return
    }
    this.#remoteTag = tag
    this.#remoteTarget = contactUri(getHeader(r, 'Contact') ?? '') || this.#o.target
    this.#routes = uacRouteSet(r)
    const allows = allowedMethods(r)
    this.#peerAllowsUpdate = allows?.includes('UPDATE') === true
    this.#ack = this.#request('ACK', this.#remoteTarget, newBranch(), this.#cseq)
    this.#o.wire.send(this.#ack)
    this.#state = 'confirmed'
    const answer = readAnswer(sdpOf(r), undefined, this.#local)
    if (this.#cancelWanted || !answer.ok) {
      // Section 15: a 2xx after we gave up is acknowledged, then ended with a BYE.
      this.#sendBye()
      this.#state = 'calling'
      return this.#fail(this.#cancelWanted || answer.ok ? { kind: 'cancelled' } : { kind: 'bad_answer', reason: answer.reason })
    }
    // The 200's Session-Expires: `refresher=uac` is us; `uas` the trunk, whose refreshes renew the deadline.
    this.#sessionTimer.arm(planAfterRefresh(r, MIN_SESSION_EXPIRES))
    this.#o.events.onAnswered(answer.audio, allows)
  }

  /** Our refresh is due: UPDATE when the trunk's 200 allowed it, else a re-INVITE with our SDP (version + 1). */
  #refresh(intervalS: number): void {
    if (this.#state !== 'confirmed') return
    let sdp: { body: string; contact: string } | undefined
    if (!this.#peerAllowsUpdate) {
      const next = nextSdpVersion(this.#sdp)
      if (next.version !== undefined) this.#local = { ...this.#local, sessionVersion: next.version }
      this.#sdp = next.sdp
      sdp = { body: next.sdp, contact: this.#o.contact }
    }
    const request = (method: string, headers: readonly SipHeader[], body: Buffer = Buffer.alloc(0), ackOf?: number) => {
      const cseq = ackOf ?? ++this.#cseq
      const branch = newBranch()
      const built = this.#request(method, this.#remoteTarget ?? this.#o.target, branch, cseq, [...headers])
      return { request: { ...built, body }, branch, cseq }
    }
    sendRefresh({ clients: this.#o.clients, wire: this.#o.wire, request }, intervalS, sdp, (outcome) => {
      if (this.#state !== 'confirmed') return
      if (outcome.kind === 'gone') return this.#expired()
      if (outcome.kind === 'failed') return this.#sessionTimer.retry(REFRESH_RETRY_MS, intervalS)
      this.#sessionTimer.arm(planAfterRefresh(outcome.answer, intervalS))
    })
  }

  /** The trunk's refresh never came, or ours found the dialog gone: BYE, the session ends `client_disconnected`. */
  #expired(): void {
    if (this.#state !== 'confirmed') return
    this.#transport?.peerEnded('client_disconnected')
    this.#sendBye()
    this.#teardown()
  }

  #sendCancel(): void {
    const invite = this.#invite
    if (invite === undefined || this.#cancelSent) return
    this.#cancelSent = true
    // Section 9.1: the INVITE's Request-URI, Call-ID, From, To, CSeq number and top Via (its branch).
    const cancel = this.#request('CANCEL', this.#o.target, invite.branch, this.#cseq)
    this.#o.clients.send(cancel, invite.branch, this.#o.wire)
    // A far end that never answers the INVITE after our CANCEL: given up after 64*T1 (section 9.1).
    this.#cancelTimer = setTimeout(() => this.#fail({ kind: 'cancelled' }), CANCEL_GIVE_UP_MS)
    this.#cancelTimer.unref()
  }

  #sendBye(): void {
    const bye = this.#request('BYE', this.#remoteTarget ?? this.#o.target, newBranch(), ++this.#cseq)
    this.#o.clients.send(bye, viaBranch(bye), this.#o.wire)
  }

  #request(method: string, uri: string, branch: string, cseq: number, extra: SipHeader[] = []): SipRequest {
    const o = this.#o
    const dialog = {
      from: o.from,
      to: o.to,
      localTag: this.localTag,
      callId: this.callId,
      via: o.via,
      remoteTag: this.#remoteTag,
      routes: this.#routes,
    }
    return uacRequest(dialog, method, uri, branch, cseq, extra)
  }

  #fail(failure: SipDialFailure): void {
    if (this.#state !== 'calling') return
    this.#o.events.onFailed(failure)
    this.#teardown()
  }

  #teardown(): void {
    if (this.#state === 'ended') return
    this.#state = 'ended'
    clearTimeout(this.#cancelTimer)
    this.#sessionTimer.stop()
    // An INVITE still unanswered (given up after CANCEL, or the endpoint closing) leaves the transaction table.
    const tx = this.#invite?.tx
    if (tx?.state === 'calling' || tx?.state === 'proceeding') tx.transportError()
    this.#media?.close()
    this.#o.events.onEnded()
  }
}
