/**
 * What TLS changes in the endpoint's addressing (RFC 3261 section 26): our Contact per transport, `sips:` where
 * the request asked for it, and the client options that check a trunk's certificate. Pure: no sockets here.
 */
import { isIP } from 'node:net'
import { type ConnectionOptions, rootCertificates } from 'node:tls'
import type { SipTransport } from '../calls/sip-admission.js'

/** The endpoint's ports: UDP and TCP share one; TLS has its own when a certificate is configured. */
export interface SipPorts {
  readonly sip: number
  readonly tls: number | undefined
}

/**
 * Our Contact URI on `transport`. Over TLS: `sips:` when the request's URI was `sips:` (RFC 3261 sections
 * 8.1.1.8 and 12.1.1), else `sip:` with `;transport=tls`; the port is the TLS listener's (the SIP port without one).
 */
export function contactFor(publicHost: string, transport: SipTransport, ports: SipPorts, sips = false): string {
  const host = hostForUri(publicHost)
  if (transport === 'udp') return `sip:${host}:${ports.sip}`
  if (transport === 'tcp') return `sip:${host}:${ports.sip};transport=tcp`
  const port = ports.tls ?? ports.sip
  return sips ? `sips:${host}:${port}` : `sip:${host}:${port};transport=tls`
}

/** The sent-by of our Via on `transport`. */
export function viaFor(
  publicHost: string,
  transport: SipTransport,
  ports: SipPorts,
): { host: string; port: number; transport: 'UDP' | 'TCP' | 'TLS' } {
  return {
    host: publicHost,
    port: transport === 'tls' ? (ports.tls ?? ports.sip) : ports.sip,
    transport: transport === 'tls' ? 'TLS' : transport === 'tcp' ? 'TCP' : 'UDP',
  }
}

/**
 * Client options for a trunk dialled over TLS: its certificate must chain to node's built-in CAs or `extraCa`
 * (SIP_TLS_CA) and name `serverName`, the URI's host. A host that is an address is checked against the
 * certificate's IP names and sends no SNI (RFC 6066 section 3 forbids addresses there).
 */
export function trunkTlsOptions(serverName: string, extraCa: string | undefined): ConnectionOptions {
  const bare = serverName.replace(/^\[|\]$/g, '')
  return {
    ca: extraCa === undefined ? undefined : [...rootCertificates, extraCa],
    servername: isIP(bare) === 0 ? bare : undefined,
  }
}

/** An IPv6 address in a URI is bracketed. */
export function hostForUri(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
}
