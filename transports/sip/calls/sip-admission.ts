/**
 * The question the SIP endpoint asks before an INVITE may become a call: who sent it and what it asks for ->
 * admit, or refuse with a status and a reason. The endpoint does not know trunks or organizations; the wiring
 * passes the function that does. Admission happens in two steps so that a call refused for its SDP, or
 * cancelled while it was being looked up, leaves nothing stored: the decision only finds who the call is for,
 * and `open` (called once the SDP and the RTP port are settled) creates the session.
 */
import type { SipCallTransport, SipSessionPort } from './sip-call-transport.js'
import type { SipHeader, SipRequest } from '../message/sip-message.js'
import type { MediaEncryption } from '../media/srtp/sdes-negotiation.js'

/** The transports the endpoint speaks. */
export type SipTransport = 'udp' | 'tcp' | 'tls'

/** Where a request came from: the packet's source, not what its Via claims. */
export interface SipSource {
  readonly address: string
  readonly port: number
  readonly transport: SipTransport
}

/** A refusal: `reason` becomes the response's reason phrase; `headers` go with it (WWW-Authenticate, Retry-After). */
export interface SipRefusal {
  readonly admit: false
  readonly status: number
  readonly reason: string
  readonly headers?: readonly SipHeader[] | undefined
}

/** An admitted call, not yet a session. */
export interface SipAdmittedCall {
  readonly admit: true
  /** The trunk's `media_encryption` (srtp/sdes-negotiation.ts); absent: `none`, plain RTP only. */
  readonly mediaEncryption?: MediaEncryption | undefined
  /** Creates and connects the session over `transport`; a refusal (balance, concurrency, draining) otherwise. */
  open(transport: SipCallTransport): Promise<{ readonly admit: true; readonly session: SipSessionPort } | SipRefusal>
}

/** The admission's answer. */
export type SipAdmissionDecision = SipAdmittedCall | SipRefusal

/** Decides on an out-of-dialog INVITE. May answer at once or later (a database look-up). */
export type SipAdmission = (source: SipSource, invite: SipRequest) => SipAdmissionDecision | Promise<SipAdmissionDecision>

/** Without trunks no address is allowed in: every INVITE is refused with 403. */
export const refuseEveryInvite: SipAdmission = () => ({ admit: false, status: 403, reason: 'no SIP trunk for this address' })
