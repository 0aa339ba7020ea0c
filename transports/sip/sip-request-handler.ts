/**
 * What the SIP endpoint answers, once a request has decoded and passed the scanner and flood checks: the
 * server transaction layer (a retransmission gets the last response again, never a second handling) and the
 * UAS core for a gateway with no dialogs yet. OPTIONS gets 200 (trunk health checks, also while draining);
 * INVITE goes to the admission, or gets 503 while draining; REGISTER 405; CANCEL, BYE with nothing to match
 * 481; a stray ACK is dropped; any other method 501.
 */
import { randomBytes } from 'node:crypto'
import type { SipAdmission, SipAdmissionDecision, SipSource } from './sip-admission.js'
import type { SipHeader, SipMessage, SipRequest, SipResponse } from './sip-message.js'
import { buildResponse } from './sip-response.js'
import { InviteServerTransaction } from './invite-transactions.js'
import type { ServerTransactionTable } from './server-transaction-table.js'
import { transactionKey } from './transaction-timers.js'

/** The methods this endpoint implements, as its Allow header lists them. */
export const ALLOWED_METHODS = 'INVITE, ACK, CANCEL, BYE, OPTIONS'

/** Seconds a draining endpoint asks a caller to wait before trying it again (a balancer tries another replica). */
export const DRAINING_RETRY_AFTER_S = 30

/** How a request arrived and how to answer it. */
export interface SipRequestContext {
  readonly source: SipSource
  /** TCP: no retransmissions; the wait timers are zero. */
  readonly reliable: boolean
  /** Sends a response back (to the Via's received/rport over UDP, on the connection over TCP). */
  readonly send: (message: SipMessage) => void
}

/** What the handler is given. */
export interface SipRequestHandlerOptions {
  readonly transactions: ServerTransactionTable
  readonly admission: SipAdmission
  readonly isDraining: () => boolean
  /** Our Contact URI for answers that carry one (`sip:host:port`). */
  readonly contact: (transport: 'udp' | 'tcp') => string
  /** Told when an admission threw or rejected: the INVITE got 500. */
  readonly onAdmissionError?: (error: unknown) => void
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
      // The ACK for our error answer completes its INVITE transaction; with none it is dropped (section 17.2.3).
      const tx = key === null ? undefined : transactions.find(key)
      if (tx instanceof InviteServerTransaction) tx.receiveAck(request)
      return
    }
    const live = key === null ? undefined : transactions.find(key)
    if (live !== undefined) {
      live.receiveRetransmission(request)
      return
    }
    const wire = { reliable: ctx.reliable, send: ctx.send }
    if (request.method === 'INVITE') {
      // Without an RFC 3261 branch (or with the table full) there is no transaction: answered statelessly.
      const tx = key === null ? null : transactions.createInvite(key, wire)
      this.#invite(request, ctx, tx)
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
          headers: [{ name: 'Contact', value: `<${this.#options.contact(ctx.source.transport)}>` }, ...capabilities()],
        })
      case 'REGISTER':
        // Not a registrar: trunks are configured by address and credentials, not registered.
        return buildResponse(request, 405, { toTag: tag, headers: [{ name: 'Allow', value: ALLOWED_METHODS }] })
      case 'CANCEL':
        return buildResponse(request, this.#cancel(request) ? 200 : 481, { toTag: tag })
      case 'BYE':
        // No dialog exists yet: every BYE is for an unknown one.
        return buildResponse(request, 481, { toTag: tag })
      default:
        return buildResponse(request, 501, { toTag: tag, headers: [{ name: 'Allow', value: ALLOWED_METHODS }] })
    }
  }

  /**
   * A CANCEL matches the INVITE transaction with the same branch and sent-by (section 9.2). The INVITE has
   * always had its final answer here (there are no calls to ring yet), so the CANCEL has nothing left to stop.
   */
  #cancel(request: SipRequest): boolean {
    const key = transactionKey({ ...request, headers: request.headers.map((h) => (h.name === 'CSeq' ? cseqAsInvite(h) : h)) })
    return key !== null && this.#options.transactions.find(key) instanceof InviteServerTransaction
  }

  #invite(request: SipRequest, ctx: SipRequestContext, tx: InviteServerTransaction | null): void {
    const answer = (decision: SipAdmissionDecision, headers: SipHeader[] = []): void => {
      const response = decision.admit
        ? // Admitted, but calls over SIP are not wired to sessions yet: temporarily unavailable, never a session.
          buildResponse(request, 480, { toTag: newTag(), reason: 'SIP calls are not enabled yet' })
        : refusal(request, decision, headers)
      if (tx === null) ctx.send(response)
      else tx.respond(response)
    }
    if (this.#options.isDraining()) {
      answer({ admit: false, status: 503, reason: 'Service Unavailable' }, [{ name: 'Retry-After', value: String(DRAINING_RETRY_AFTER_S) }])
      return
    }
    let decided: SipAdmissionDecision | Promise<SipAdmissionDecision>
    try {
      decided = this.#options.admission(ctx.source, request)
    } catch (e) {
      this.#admissionFailed(e, answer)
      return
    }
    if (!(decided instanceof Promise)) {
      answer(decided)
      return
    }
    // The decision takes a round trip: 100 Trying stops the peer's retransmissions meanwhile (section 17.2.1).
    const trying = buildResponse(request, 100)
    if (tx === null) ctx.send(trying)
    else tx.respond(trying)
    decided.then(answer, (e: unknown) => this.#admissionFailed(e, answer))
  }

  #admissionFailed(error: unknown, answer: (d: SipAdmissionDecision) => void): void {
    this.#options.onAdmissionError?.(error)
    answer({ admit: false, status: 500, reason: 'Server Internal Error' })
  }
}

/**
 * The answer to a refused INVITE. A status outside 300-699 would not end the transaction as a refusal (a 2xx
 * would wait for an ACK to a call that does not exist), so it becomes 500; the reason goes on the wire as the
 * reason phrase, so line breaks are removed from it.
 */
function refusal(request: SipRequest, decision: { status: number; reason: string }, headers: SipHeader[]): SipResponse {
  const valid = Number.isInteger(decision.status) && decision.status >= 300 && decision.status <= 699
  const reason = decision.reason.replace(/[\r\n]+/g, ' ').slice(0, 200)
  return valid
    ? buildResponse(request, decision.status, { toTag: newTag(), reason, headers })
    : buildResponse(request, 500, { toTag: newTag(), headers })
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
