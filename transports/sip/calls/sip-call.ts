/**
 * One inbound call as the UAS sees it (RFC 3261 sections 12 to 15): ringing until its 200, then a dialog with our
 * tag, the peer's tag and our own CSeq space. It answers the INVITE through its server transaction (the 200 is
 * retransmitted until the ACK, which carries the answer when our 200 carried the offer), takes a CANCEL before
 * the 200 (487), answers re-INVITEs and UPDATEs (hold and unhold, session-timer refreshes), sends its own
 * refreshes when it is the refresher, transfers the caller by REFER (and reads the NOTIFYs), and ends either
 * way: the peer's BYE, or ours when the session ends by itself, the 200 is never acknowledged or a refresh is
 * missed. Its media and transport are attached once the session exists; the RTP port is freed once.
 */
import type { EndReason } from '../../../core/end-reason.js'
import { voxError } from '../../../core/errors.js'
import type { TransferTarget } from '../../../core/transfer-target.js'
import type { ClientTransactionTable, ClientWire } from '../transactions/client-transaction-table.js'
import type { InviteServerTransaction } from '../transactions/invite-transactions.js'
import type { RtpMedia } from '../media/rtp-media.js'
import { answerWithRtcp } from '../media/rtcp-sdp.js'
import { type LocalMedia, readAnswer } from '../media/sdp-offer-answer.js'
import { sdpOf } from '../message/sdp-body.js'
import type { SipCallTransport } from './sip-call-transport.js'
import { allowedMethods, getHeader, type SipHeader, type SipRequest, type SipResponse } from '../message/sip-message.js'
import { buildResponse } from '../message/sip-response.js'
import { CallSessionTimer, planAfterRefresh } from './call-session-timer.js'
import { nextSdpVersion, REFRESH_RETRY_MS, sendRefresh } from './session-refresh.js'
import type { TimerScheduler } from '../timer-scheduler.js'
import { REFER_NOTIFY_TIMEOUT_MS, ReferSubscription, referTo } from './sip-refer.js'
import { cseqNumber, nameAddrUri, uasPeerHost, uasRequest, uasRouteSet } from './uas-dialog.js'

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
  readonly via: { readonly host: string; readonly port: number; readonly transport: 'UDP' | 'TCP' | 'TLS' }
  /** How our requests reach the peer: where its INVITE came from. */
  readonly wire: ClientWire
  readonly clients: ClientTransactionTable
  /** The endpoint's timers (the session timer's deadline). */
  readonly timers: TimerScheduler
  /** Told once when the call is over, for any reason (the endpoint forgets it). */
  readonly onEnded: () => void
}

/** One inbound SIP call. */
export class SipCall {
  readonly #o: SipCallOptions
  #state: SipCallState = 'ringing'
  #cseq = 0
  #media: RtpMedia | undefined
  #transport: SipCallTransport | undefined
  #local: LocalMedia | undefined
  /** Our SDP as last sent. */
  #currentSdp: string | undefined
  /** Our 200 carried the offer: the ACK carries the answer, and the media starts with it. */
  #awaitingAnswer = false
  /** RFC 4028: the deadline for the peer's refresh, when it is the refresher. */
  readonly #sessionTimer: CallSessionTimer
  /** The transfer by REFER in progress, if any. */
  #refer: ReferSubscription | undefined
  /** The last re-INVITE answered 200, whose ACK (same CSeq number) stops its retransmissions. */
  #reinvite: { cseq: number; tx: InviteServerTransaction } | undefined

  constructor(options: SipCallOptions) {
    this.#o = options
    this.#sessionTimer = new CallSessionTimer(options.timers, { onExpired: () => this.#expired(), onRefresh: (s) => this.#refresh(s) })
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

  /** Answers the INVITE with a final refusal (ringing calls only). */
  refuse(status: number, reason: string, headers: readonly SipHeader[] = []): void {
    if (this.#state !== 'ringing') return
    this.#respond(buildResponse(this.#o.invite, status, { toTag: this.localTag, reason, headers }))
    this.#end()
  }

  /** A CANCEL before the 200: the INVITE gets 487 and the call is over. False when it was already answered. */
  cancel(): boolean {
    if (this.#state !== 'ringing') return false
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
    this.#currentSdp = sdp
    if (this.#state !== 'ringing') return this.#teardown()
    this.#state = 'answered'
    // The answerer refused a bad timer before anything was allocated: here it is always acceptable.
    const timer = CallSessionTimer.negotiate(this.#o.invite)
    this.#respond(
      buildResponse(this.#o.invite, 200, {
        toTag: this.localTag,
        headers: [...this.#recordRoutes(), ...this.#sdpHeaders(), ...timer.headers],
        body: Buffer.from(sdp),
      }),
    )
    if (timer.ok) this.#sessionTimer.arm(timer.plan)
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
    const answer = readAnswer(sdpOf(request), ['PCMU'], this.#local)
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
    if (this.#state === 'answered') this.#expired()
  }

  /** True when the peer's INVITE listed REFER in its Allow header: the call can be transferred by REFER. */
  get peerAcceptsRefer(): boolean {
    return allowedMethods(this.#o.invite)?.includes('REFER') === true
  }

  /**
   * Blind transfer (RFC 3515): a REFER in the dialog asks the peer to call `target` itself, and its NOTIFYs
   * report how that call went. Resolves once a NOTIFY reports the target's 2xx (the session then ends
   * `transferred`, and its end sends our BYE); rejects with `transfer_failed` on a refused REFER, a failed or
   * missing outcome, the call ending first or `signal` aborting. The call goes on after a failure.
   */
  refer(target: TransferTarget, signal: AbortSignal): Promise<void> {
    const failed = (message: string) => voxError('transfer_failed', message)
    if (this.#state !== 'answered' && this.#state !== 'confirmed') return Promise.reject(failed('the SIP call is not connected'))
    if (this.#refer?.pending === true) return Promise.reject(failed('a transfer of this call is already in progress'))
    if (signal.aborted) return Promise.reject(failed('the session ended'))
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => subscription.abort('the session ended before the transfer completed')
      const subscription = new ReferSubscription(this.#o.timers, REFER_NOTIFY_TIMEOUT_MS, (outcome) => {
        signal.removeEventListener('abort', onAbort)
        if (outcome.ok) resolve()
        else reject(failed(outcome.error))
      })
      this.#refer = subscription
      signal.addEventListener('abort', onAbort, { once: true })
      const { request, branch } = this.#inDialog('REFER', [
        { name: 'Refer-To', value: referTo(target, uasPeerHost(this.#o.invite, this.#o.via.host)) },
        { name: 'Referred-By', value: `<${nameAddrUri(getHeader(this.#o.invite, 'To') ?? '') || this.#o.contact}>` },
        { name: 'Contact', value: `<${this.#o.contact}>` },
      ])
      this.#o.clients.send(request, branch, this.#o.wire, (status) => subscription.answered(status))
    })
  }

  /** A NOTIFY in the dialog: the progress of our REFER (481 when there is none). */
  notify(request: SipRequest): SipResponse {
    const subscription = this.#refer
    if (subscription === undefined || this.#state === 'ended') return buildResponse(request, 481)
    const status = subscription.notify(request)
    return buildResponse(request, status, status === 489 ? { headers: [{ name: 'Allow-Events', value: 'refer' }] } : {})
  }

  /** The peer's BYE: 200 (by the caller), and the session ends as a caller hang-up. */
  peerBye(): void {
    if (this.#state === 'ended') return
    this.#refer?.abort('the caller hung up before the transfer completed')
    this.#transport?.peerEnded('caller_hangup')
    this.#teardown()
  }

  /**
   * A re-INVITE: the new offer is answered with our SDP (a new version; hold sends the caller nothing), and a
   * session timer it asks for is renewed. One without SDP only refreshes the timer, and gets our current SDP.
   */
  reinvite(request: SipRequest, tx: InviteServerTransaction | null): SipResponse {
    const response = this.#modify(request, true)
    const cseq = cseqNumber(request)
    if (response.status === 200) this.#reinvite = tx === null || cseq === undefined ? undefined : { cseq, tx }
    return response
  }

  /** An UPDATE (RFC 3311): a session-timer refresh, with or without a new offer. */
  update(request: SipRequest): SipResponse {
    return this.#modify(request, false)
  }

  #modify(request: SipRequest, isInvite: boolean): SipResponse {
    const [local, media] = [this.#local, this.#media]
    if (local === undefined || media === undefined || this.#state === 'ended') return buildResponse(request, 481)
    const timer = CallSessionTimer.negotiate(request)
    if (!timer.ok) return buildResponse(request, timer.status, { reason: timer.reason, headers: timer.headers })
    let body = Buffer.alloc(0)
    const offer = sdpOf(request)
    if (offer !== '') {
      const next = { ...local, sessionVersion: local.sessionVersion + 1 }
      const answered = answerWithRtcp(offer, next)
      if (!answered.ok) return buildResponse(request, 488, { headers: [{ name: 'Warning', value: answered.warning }] })
      this.#local = next
      media.update(answered.audio, answered.rtcp)
      this.#transport?.setCodec(answered.audio.codec)
      this.#transport?.setHeld(answered.audio.held)
      body = Buffer.from(answered.answer)
      this.#currentSdp = answered.answer
    } else if (isInvite) {
      // A re-INVITE without an offer wants ours (RFC 3261 14.2); the same SDP, so its answer changes nothing.
      body = Buffer.from(this.#currentSdp ?? '')
    }
    this.#sessionTimer.arm(timer.plan)
    return buildResponse(request, 200, { headers: [...(body.length > 0 ? this.#sdpHeaders() : []), ...timer.headers], body })
  }

  /** Section 12.1.1: the 2xx that makes the dialog copies the INVITE's Record-Route (uas-dialog.ts). */
  #recordRoutes(): SipHeader[] {
    return uasRouteSet(this.#o.invite).map((value) => ({ name: 'Record-Route', value }))
  }

  #sdpHeaders(): SipHeader[] {
    return [
      { name: 'Contact', value: `<${this.#o.contact}>` },
      { name: 'Content-Type', value: 'application/sdp' },
    ]
  }

  /**
   * Our session refresh is due (we are the refresher): UPDATE when the peer allows it, else a re-INVITE with our
   * SDP again. A 408, 481 or no answer ends the call as the peer's disappearance (BYE, `client_disconnected`).
   */
  #refresh(intervalS: number): void {
    if (this.#state !== 'confirmed' && this.#state !== 'answered') return
    const update = allowedMethods(this.#o.invite)?.includes('UPDATE') === true
    let sdp: { body: string; contact: string } | undefined
    if (!update && this.#currentSdp !== undefined) {
      const next = nextSdpVersion(this.#currentSdp)
      if (next.version !== undefined && this.#local !== undefined) this.#local = { ...this.#local, sessionVersion: next.version }
      this.#currentSdp = next.sdp
      sdp = { body: next.sdp, contact: this.#o.contact }
    }
    const dialog = { clients: this.#o.clients, wire: this.#o.wire, request: this.#inDialog.bind(this) }
    sendRefresh(dialog, intervalS, sdp, (outcome) => {
      if (this.#state === 'ended') return
      if (outcome.kind === 'gone') return this.#expired()
      if (outcome.kind === 'failed') return this.#sessionTimer.retry(REFRESH_RETRY_MS, intervalS)
      this.#sessionTimer.arm(planAfterRefresh(outcome.answer, intervalS))
    })
  }

  /** The peer was to refresh the session timer and did not (or our refresh found the dialog gone): BYE. */
  #expired(): void {
    if (this.#state === 'ended') return
    this.#transport?.peerEnded('client_disconnected')
    this.hangUp('client_disconnected')
  }

  /** The session ended by itself (agent hang-up, limits, shutdown): BYE to the peer, then the port is freed. */
  hangUp(_reason: EndReason): void {
    if (this.#state === 'ended') return
    if (this.#state === 'ringing') return this.refuse(480, 'Temporarily Unavailable')
    const { request, branch } = this.#inDialog('BYE')
    this.#o.clients.send(request, branch, this.#o.wire)
    this.#teardown()
  }

  /** Ends the call without a word to the peer (the endpoint closes). */
  drop(): void {
    this.#teardown()
  }

  /** Our request within the dialog (uas-dialog.ts); an ACK takes its INVITE's number, every other the next of ours. */
  #inDialog(
    method: 'BYE' | 'REFER' | 'INVITE' | 'UPDATE' | 'ACK',
    extra: readonly SipHeader[] = [],
    body: Buffer = Buffer.alloc(0),
    ackOf?: number,
  ): { request: SipRequest; branch: string; cseq: number } {
    const cseq = ackOf ?? ++this.#cseq
    const o = this.#o
    return {
      ...uasRequest({ invite: o.invite, localTag: this.localTag, callId: this.callId, via: o.via }, method, cseq, extra, body),
      cseq,
    }
  }

  #respond(response: SipResponse): void {
    if (this.#o.tx === null) this.#o.respond(response)
    else this.#o.tx.respond(response)
  }

  #teardown(): void {
    this.#refer?.abort('the call ended before the transfer completed')
    this.#sessionTimer.stop()
    this.#media?.close()
    this.#end()
  }

  #end(): void {
    if (this.#state === 'ended') return
    this.#state = 'ended'
    this.#o.onEnded()
  }
}
