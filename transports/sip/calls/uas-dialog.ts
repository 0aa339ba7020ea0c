/**
 * The dialog of an inbound call as the UAS keeps it (RFC 3261 section 12): its route set (the INVITE's
 * Record-Route), the remote target (the INVITE's Contact), and our requests within it: From the INVITE's To with
 * our tag, To its From, through the route set, to the remote target.
 */
import { newBranch } from '../transactions/client-transaction-table.js'
import { getHeader, getHeaderValues, type SipHeader, type SipRequest } from '../message/sip-message.js'
import { parseCSeq, parseUri } from '../message/sip-uri-codec.js'

/** Most Record-Route entries a dialog keeps (a proxy chain longer than this is not one a trunk sends). */
const MAX_ROUTES = 16

/** What our requests in the dialog are made of. */
export interface UasDialog {
  readonly invite: SipRequest
  readonly localTag: string
  readonly callId: string
  /** Our Via sent-by (host:port, transport). */
  readonly via: { readonly host: string; readonly port: number; readonly transport: 'UDP' | 'TCP' | 'TLS' }
}

/** The dialog's route set as the UAS keeps it: the INVITE's Record-Route values, in order (section 12.1.1). */
export function uasRouteSet(invite: SipRequest): string[] {
  return (getHeaderValues(invite, 'Record-Route') ?? []).slice(0, MAX_ROUTES)
}

/** Our request within the dialog (section 12.2.1.1), numbered `cseq`. */
export function uasRequest(
  dialog: UasDialog,
  method: string,
  cseq: number,
  extra: readonly SipHeader[] = [],
  body: Buffer = Buffer.alloc(0),
): { request: SipRequest; branch: string } {
  const inv = dialog.invite
  const branch = newBranch()
  const { host, port, transport } = dialog.via
  const headers: SipHeader[] = [
    { name: 'Via', value: `SIP/2.0/${transport} ${host.includes(':') ? `[${host}]` : host}:${port};branch=${branch};rport` },
    { name: 'Max-Forwards', value: '70' },
    { name: 'From', value: `${getHeader(inv, 'To') ?? ''};tag=${dialog.localTag}` },
    { name: 'To', value: getHeader(inv, 'From') ?? '' },
    { name: 'Call-ID', value: dialog.callId },
    { name: 'CSeq', value: `${cseq} ${method}` },
    // Loose routing (section 16.12): the proxies in the route set are named in Route; the wire is the one the
    // INVITE came on (its last hop, which is the first route), so no look-up of a route's host is needed.
    ...uasRouteSet(inv).map((value) => ({ name: 'Route', value })),
    ...extra,
  ]
  return { request: { kind: 'request', method, uri: uasRemoteTarget(inv), headers, body }, branch }
}

/** The remote target: the INVITE's Contact (section 12.1.1); without a usable one, its Request-URI. */
export function uasRemoteTarget(invite: SipRequest): string {
  const contact = getHeader(invite, 'Contact')
  return (contact === undefined ? '' : contactUri(contact)) || invite.uri
}

/** The host a number is transferred to: the peer's, as its Contact names it (else its From, else `fallback`). */
export function uasPeerHost(invite: SipRequest, fallback: string): string {
  const contact = getHeader(invite, 'Contact')
  const uri = parseUri(contact === undefined ? '' : contactUri(contact)) ?? parseUri(nameAddrUri(getHeader(invite, 'From') ?? ''))
  if (uri === null) return fallback
  return uri.port === undefined ? uri.host : `${uri.host}:${uri.port}`
}

/** A request's CSeq number. */
export function cseqNumber(request: SipRequest): number | undefined {
  return parseCSeq(getHeader(request, 'CSeq') ?? '')?.seq
}

/** The URI of a name-addr (`"Name" <sip:...>;tag=x`), or '' when it has none. */
export function nameAddrUri(value: string): string {
  return /<([^>]*)>/.exec(value)?.[1]?.trim() ?? ''
}

/** The URI inside a Contact value (`<sip:...>;params` or a bare addr-spec). */
export function contactUri(value: string): string {
  const m = /<([^>]*)>/.exec(value)
  const uri = (m?.[1] ?? value.split(';')[0] ?? '').trim()
  return /^sips?:/i.test(uri) ? uri : ''
}
