/**
 * What the SIP endpoint answers, once a request has decoded and passed the scanner and flood checks: the
 * server transaction layer (a retransmission gets the last response again, never a second handling) and the
 * UAS core. OPTIONS gets 200 (trunk health checks, also while draining); a new INVITE goes to the admission
 * (503 while draining) and, admitted, to the answerer that makes it a call; an ACK, BYE or re-INVITE goes to
 * its dialog (481 without one), and so does a NOTIFY about our REFER; CANCEL stops a ringing call (487); REGISTER 405; any other method 501.
 * Before any of that, a Request-URI scheme we do not serve gets 416 and an unknown required extension 420
 * (uas-request-checks.ts).
 */
import { randomBytes } from 'node:crypto'
import type { ClientTransactionTable, ClientWire } from '../transactions/client-transaction-table.js'
import type { SipAdmission, SipAdmissionDecision, SipSource, SipTransport } from '../calls/sip-admission.js'
import { SipCall } from '../calls/sip-call.js'
import type { SipOutboundCall } from '../calls/sip-outbound-call.js'
import type { SipCallAnswerer } from '../calls/sip-call-answerer.js'
import { type SipDialogTable, toTag } from '../calls/sip-dialogs.js'
import type { SipHeader, SipMessage, SipRequest, SipResponse } from '../message/sip-message.js'
import { buildResponse } from '../message/sip-response.js'
import { InviteServerTransaction } from '../transactions/invite-transactions.js'
import type { ServerTransactionTable } from '../transactions/server-transaction-table.js'
import { transactionKey } from '../transactions/transaction-timers.js'
import type { TimerScheduler } from '../timer-scheduler.js'
import { uasRefusal } from './uas-request-checks.js'

/** The methods this endpoint implements, as its Allow header lists them. */
export const ALLOWED_METHODS = 'INVITE, ACK, CANCEL, BYE, OPTIONS, UPDATE, NOTIFY'

/** Seconds a draining endpoint asks a caller to wait before trying it again (a balancer tries another replica). */
export const DRAINING_RETRY_AFTER_S = 30

/** How a request arrived and how to answer it. */
export interface SipRequestContext {
  readonly source: SipSource
  /** TCP: no retransmissions; the wait timers are zero. */
  readonly reliable: boolean
  /** Sends a response back (to the Via's received/rport over UDP, on the connection over TCP). */
  readonly send: (message: SipMessage) => void
  /** Sends a request of ours to the peer: where its request came from (UDP), on the connection (TCP). */
  readonly sendRequest: (message: SipRequest) => void
}

/** What the handler needs to turn INVITEs into calls. */
export interface SipCallSupport {
  /** Inbound calls, and outbound ones (the dialer's), whose in-dialog requests find them the same way. */
  readonly dialogs: SipDialogTable<SipCall | SipOutboundCall>
  readonly answerer: SipCallAnswerer
  readonly clients: ClientTransactionTable
  readonly timers: TimerScheduler
  /** Our Via sent-by for requests we send. */
  readonly via: (transport: SipTransport) => { host: string; port: number; transport: 'UDP' | 'TCP' | 'TLS' }
}

/** What the handler is given. */
export interface SipRequestHandlerOptions {
  readonly transactions: ServerTransactionTable
  readonly admission: SipAdmission
  readonly isDraining: () => boolean
  /**
   * Our Contact URI for answers that carry one (`sip:host:port`, with `;transport=` over TCP and TLS); `sips:` when
   * the request came over TLS to a `sips:` Request-URI (RFC 3261 sections 8.1.1.8 and 12.1.1).
   */
  readonly contact: (transport: SipTransport, requestUri: string) => string
  /** Told when an admission threw or rejected: the INVITE got 500. */
  readonly onAdmissionError?: (error: unknown) => void
  readonly calls: SipCallSupport
}

/** Answers decoded requests through the server transactions. */
export class SipRequestHandler {
  readonly #options: SipRequestHandlerOptions

  constructor(options: SipRequestHandlerOptions) {
    this.#options = options
  }

  /** Handles one request. Never throws for anything a peer can send. */
  handle(request: SipRequest, ctx: SipRequestContext): void {
    const { transactions } = this.#options
    const key = transactionKey(request)
    if (request.method === 'ACK') {
      // The ACK for our error answer completes its INVITE transaction; the ACK for a 200 is a request of its own
      // (another branch) that its dialog takes; with neither it is dropped (section 17.2.3). An RFC 2543 peer's
      // ACK for a 200 matches the INVITE's transaction by the older rule: it is still the dialog's (which stops
      // the 200's retransmissions and reads an answer the ACK may carry).
      const tx = key === null ? undefined : transactions.find(key)
      if (tx instanceof InviteServerTransaction && tx.state !== 'accepted') tx.receiveAck(request)
      else this.#options.calls.dialogs.findDialog(request)?.ack(request)
      return
    }
    const live = key === null ? undefined : transactions.find(key)
    if (live !== undefined) {
      live.receiveRetransmission(request)
      return
    }
    const wire = { reliable: ctx.reliable, send: ctx.send }
    const refused = uasRefusal(request)
    if (refused !== null) {
      // Before the admission: the answer depends on the request's form alone, never on who may call which number.
      const tx =
        key === null ? null : request.method === 'INVITE' ? transactions.createInvite(key, wire) : transactions.createNonInvite(key, wire)
      const response = buildResponse(request, refused.status, { toTag: newTag(), headers: refused.headers })
      if (tx === null) ctx.send(response)
      else tx.respond(response)
      return
    }
    if (request.method === 'INVITE' && toTag(request) !== undefined) {
      // A re-INVITE (hold, unhold, a new address) within a dialog; a To tag we do not know: 481.
      const tx = key === null ? null : transactions.createInvite(key, wire)
      const call = this.#options.calls.dialogs.findDialog(request)
      const response = call === undefined ? buildResponse(request, 481) : call.reinvite(request, tx)
      if (tx === null) ctx.send(response)
      else tx.respond(response)
      return
    }
    if (request.method === 'INVITE') {
      // Without a Via or CSeq to key it (or with the table full) there is no transaction: answered statelessly.
      // A 200 is resent until its ACK, and one never acknowledged (timer L, 64*T1) ends the call with a BYE
      // (RFC 3261 section 13.3.1.4, RFC 6026), an RFC 2543 peer's too: its INVITE is keyed by the older rule.
      let call: SipCall | undefined
      const tx = key === null ? null : transactions.createInvite(key, wire, (final) => (final.status < 300 ? call?.noAck() : undefined))
      call = this.#invite(request, ctx, tx, key)
      return
    }
    const tx = key === null ? null : transactions.createNonInvite(key, wire)
    const response = this.#nonInvite(request, ctx)
    if (tx === null) ctx.send(response)
    else tx.respond(response)
  }

  #nonInvite(request: SipRequest, ctx: SipRequestContext): SipResponse {
    const tag = newTag()
    switch (request.method) {
      case 'OPTIONS':
        return buildResponse(request, 200, {
          toTag: tag,
          headers: [{ name: 'Contact', value: `<${this.#options.contact(ctx.source.transport, request.uri)}>` }, ...capabilities()],
        })
      case 'REGISTER':
        // Not a registrar: trunks are configured by address and credentials, not registered.
        return buildResponse(request, 405, { toTag: tag, headers: [{ name: 'Allow', value: ALLOWED_METHODS }] })
      case 'CANCEL':
        return buildResponse(request, this.#cancel(request) ? 200 : 481, { toTag: tag })
      case 'UPDATE': {
        const call = this.#options.calls.dialogs.findDialog(request)
        return call === undefined ? buildResponse(request, 481, { toTag: tag }) : call.update(request)
      }
      case 'NOTIFY': {
        // The progress of a transfer by REFER (inbound calls only: an outbound call sends no REFER yet).
        const call = this.#options.calls.dialogs.findDialog(request)
        return call instanceof SipCall ? call.notify(request) : buildResponse(request, 481, { toTag: tag })
      }
      case 'BYE': {
        const call = this.#options.calls.dialogs.findDialog(request)
        if (call === undefined) return buildResponse(request, 481, { toTag: tag })
        call.peerBye()
        return buildResponse(request, 200)
      }
      default:
        return buildResponse(request, 501, { toTag: tag, headers: [{ name: 'Allow', value: ALLOWED_METHODS }] })
    }
  }

  /**
   * A CANCEL matches the INVITE transaction with the same branch and sent-by (section 9.2). A call still ringing
   * is stopped (its INVITE gets 487); an INVITE already answered finally has nothing left to stop, but the
   * CANCEL still gets 200 (section 9.2).
   */
  #cancel(request: SipRequest): boolean {
    const key = transactionKey({ ...request, headers: request.headers.map((h) => (h.name === 'CSeq' ? cseqAsInvite(h) : h)) })
    if (key === null) return false
    this.#options.calls.dialogs.findEarly(key)?.cancel()
    return this.#options.transactions.find(key) instanceof InviteServerTransaction
  }

  #invite(request: SipRequest, ctx: SipRequestContext, tx: InviteServerTransaction | null, key: string | null): SipCall {
    const { calls } = this.#options
    const transport = ctx.source.transport
    const wire: ClientWire = { reliable: ctx.reliable, send: ctx.sendRequest }
    const localTag = newTag()
    const call = new SipCall({
      invite: request,
      // Without a branch no CANCEL can name it: a key of its own keeps it in the table all the same.
      inviteKey: key ?? `stateless\n${localTag}`,
      tx,
      respond: ctx.send,
      localTag,
      contact: this.#options.contact(transport, request.uri),
      via: calls.via(transport),
      wire,
      clients: calls.clients,
      timers: calls.timers,
      onEnded: () => calls.dialogs.remove(call),
    })
    if (this.#options.isDraining()) {
      call.refuse(503, 'Service Unavailable', [{ name: 'Retry-After', value: String(DRAINING_RETRY_AFTER_S) }])
      return call
    }
    if (!calls.dialogs.addEarly(call.inviteKey, call)) {
      call.refuse(503, 'too many calls', [{ name: 'Retry-After', value: String(DRAINING_RETRY_AFTER_S) }])
      return call
    }
    const answer = (decision: SipAdmissionDecision): void => {
      // A CANCEL that came while the admission looked things up already answered the INVITE 487.
      if (call.state !== 'ringing') return
      if (!decision.admit) {
        const r = refusal(decision)
        call.refuse(r.status, r.reason, decision.headers ?? [])
        return
      }
      void calls.answerer.connect(call, decision, ctx.source, request).catch((e: unknown) => {
        this.#options.onAdmissionError?.(e)
        call.refuse(500, 'Server Internal Error')
      })
    }
    let decided: SipAdmissionDecision | Promise<SipAdmissionDecision>
    try {
      decided = this.#options.admission(ctx.source, request)
    } catch (e) {
      this.#admissionFailed(e, answer)
      return call
    }
    if (!(decided instanceof Promise)) {
      answer(decided)
      return call
    }
    // The decision takes a round trip: 100 Trying stops the peer's retransmissions meanwhile (section 17.2.1).
    const trying = buildResponse(request, 100)
    if (tx === null) ctx.send(trying)
    else tx.respond(trying)
    decided.then(answer, (e: unknown) => this.#admissionFailed(e, answer))
    return call
  }

  #admissionFailed(error: unknown, answer: (d: SipAdmissionDecision) => void): void {
    this.#options.onAdmissionError?.(error)
    answer({ admit: false, status: 500, reason: 'Server Internal Error' })
  }
}

/**
 * The status and reason of a refused INVITE. A status outside 300-699 would not end the transaction as a
 * refusal (a 2xx would wait for an ACK to a call that does not exist), so it becomes 500; the reason goes on the
 * wire as the reason phrase, so line breaks are removed from it.
 */
function refusal(decision: { status: number; reason: string }): { status: number; reason: string } {
  const valid = Number.isInteger(decision.status) && decision.status >= 300 && decision.status <= 699
  const reason = decision.reason.replace(/[\r\n]+/g, ' ').slice(0, 200)
  return valid ? { status: decision.status, reason } : { status: 500, reason: 'Server Internal Error' }
}

/** What an OPTIONS answer advertises (RFC 3261 section 11.2). */
function capabilities(): SipHeader[] {
  return [
    { name: 'Allow', value: ALLOWED_METHODS },
    { name: 'Accept', value: 'application/sdp' },
    { name: 'Supported', value: 'timer' },
  ]
}

function cseqAsInvite(h: SipHeader): SipHeader {
  return { name: 'CSeq', value: h.value.replace(/CANCEL\s*$/i, 'INVITE') }
}

/** A To tag: 64 random bits. */
function newTag(): string {
  return randomBytes(8).toString('hex')
}
