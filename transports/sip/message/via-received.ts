/**
 * RFC 3261 section 18.2.1 and RFC 3581 on the server side: the top Via of a request received over UDP is
 * stamped with `received` (the packet's source address, when the sent-by differs) and `rport` (the source port,
 * when the client asked for it), and section 18.2.2 (with RFC 3581 section 4) sends the response there. Sending
 * to the packet's source address rather than a sent-by host name also means no DNS look-up for a stranger.
 */
import type { SipHeader, SipRequest } from './sip-message.js'
import { formatVia, parseVia } from './sip-uri-codec.js'

/** Where a UDP response goes. */
export interface ResponseDestination {
  readonly address: string
  readonly port: number
}

/** The request with its top Via stamped, and where its responses go; `null` when the top Via does not parse. */
export function stampReceived(
  request: SipRequest,
  source: { address: string; port: number },
): { request: SipRequest; destination: ResponseDestination } | null {
  const index = request.headers.findIndex((h) => h.name === 'Via')
  if (index < 0) return null
  const value = request.headers[index]!.value
  const comma = topValueEnd(value)
  const via = parseVia(value.slice(0, comma))
  if (via === null) return null
  const params = new Map(via.params)
  const host = via.host.replace(/^\[|\]$/g, '')
  if (host.toLowerCase() !== source.address.toLowerCase() || params.has('received')) params.set('received', source.address)
  const wantsRport = params.has('rport')
  if (wantsRport) params.set('rport', String(source.port))
  const stamped = formatVia({ ...via, params }) + value.slice(comma)
  const headers: SipHeader[] = request.headers.map((h, i) => (i === index ? { name: 'Via', value: stamped } : h))
  const port = wantsRport ? source.port : (via.port ?? 5060)
  return { request: { ...request, headers }, destination: { address: source.address, port } }
}

/** Where the first value of a Via header line ends: the first comma outside quotes (a later Via follows it). */
function topValueEnd(value: string): number {
  let quoted = false
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]
    if (ch === '"') quoted = !quoted
    else if (ch === '\\' && quoted) i++
    else if (ch === ',' && !quoted) return i
  }
  return value.length
}
