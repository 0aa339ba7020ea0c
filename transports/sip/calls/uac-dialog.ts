/**
 * The dialog of an outbound call as the UAC keeps it (RFC 3261 sections 12.1.2 and 12.2.1.1): the route set (the
 * 2xx's Record-Route in reverse) and our requests: From us with our tag, To the callee with its tag once the dialog
 * exists, through the route set (a CANCEL copies the INVITE's and carries none).
 */
import { getHeader, getHeaderValues, type SipHeader, type SipRequest, type SipResponse } from '../message/sip-message.js'
import { parseNameAddr } from '../message/sip-uri-codec.js'

/** Most Record-Route entries kept for the route set. */
const MAX_ROUTES = 16

/** What our requests in the dialog are made of; `remoteTag` once the callee answered. */
export interface UacDialog {
  readonly from: string
  readonly to: string
  readonly localTag: string
  readonly callId: string
  /** Our Via sent-by (host:port, transport). */
  readonly via: { readonly host: string; readonly port: number; readonly transport: 'UDP' | 'TCP' | 'TLS' }
  readonly remoteTag: string | undefined
  readonly routes: readonly string[]
}

/**
 * Section 12.1.2: the route set is the 2xx's Record-Route in reverse; our requests in the dialog carry it. They
 * still go to the trunk's address (its SBC is the usual record-routing proxy), not to the first route.
 */
export function uacRouteSet(answer: SipResponse): string[] {
  return (getHeaderValues(answer, 'Record-Route') ?? []).slice(0, MAX_ROUTES).reverse()
}

/** Our request `method` to `uri` on `branch`, numbered `cseq`. */
export function uacRequest(
  dialog: UacDialog,
  method: string,
  uri: string,
  branch: string,
  cseq: number,
  extra: readonly SipHeader[] = [],
): SipRequest {
  const { host, port, transport } = dialog.via
  const inDialog = dialog.remoteTag !== undefined && method !== 'CANCEL'
  const headers: SipHeader[] = [
    { name: 'Via', value: `SIP/2.0/${transport} ${host.includes(':') ? `[${host}]` : host}:${port};branch=${branch};rport` },
    { name: 'Max-Forwards', value: '70' },
    { name: 'From', value: `${dialog.from};tag=${dialog.localTag}` },
    { name: 'To', value: inDialog ? `${dialog.to};tag=${dialog.remoteTag}` : dialog.to },
    { name: 'Call-ID', value: dialog.callId },
    { name: 'CSeq', value: `${cseq} ${method}` },
    ...(inDialog ? dialog.routes.map((value) => ({ name: 'Route', value })) : []),
    ...extra,
  ]
  return { kind: 'request', method, uri, headers, body: Buffer.alloc(0) }
}

/** The To tag of a response (the callee's side of the dialog). */
export function toTagOf(r: SipResponse): string | undefined {
  const to = getHeader(r, 'To')
  const tag = to === undefined ? undefined : parseNameAddr(to)?.params.get('tag')
  return typeof tag === 'string' && tag !== '' ? tag : undefined
}

/** The branch of a request's top Via. */
export function viaBranch(request: SipRequest): string {
  return /branch=([^;,\s]+)/.exec(getHeader(request, 'Via') ?? '')?.[1] ?? ''
}
