/**
 * The question the SIP endpoint asks before an INVITE may become a call: who sent it and what it asks for ->
 * admit, or refuse with a status and a reason. The endpoint does not know trunks or organizations; the wiring
 * passes the function that does.
 */
import type { SipRequest } from './sip-message.js'

/** Where a request came from: the packet's source, not what its Via claims. */
export interface SipSource {
  readonly address: string
  readonly port: number
  readonly transport: 'udp' | 'tcp'
}

/** The admission's answer. `reason` becomes the response's reason phrase. */
export type SipAdmissionDecision = { readonly admit: true } | { readonly admit: false; readonly status: number; readonly reason: string }

/** Decides on an out-of-dialog INVITE. May answer at once or later (a database look-up). */
export type SipAdmission = (source: SipSource, invite: SipRequest) => SipAdmissionDecision | Promise<SipAdmissionDecision>

/** Until SIP trunks exist no address is allowed in: every INVITE is refused with 403. */
export const refuseEveryInvite: SipAdmission = () => ({ admit: false, status: 403, reason: 'no SIP trunk for this address' })
