/**
 * The endpoint's sockets bound: UDP and TCP on one port (with port 0, tried again until both get the same free
 * port), and TLS on a port of its own when a certificate is given. A failure closes what was bound before it.
 */
import type { RemoteInfo } from 'node:dgram'
import type { Log } from '../../../core/log.js'
import { DEFAULT_TCP_LIMITS, type SipTcpEvents, SipTcpListener, type SipTcpLimits } from './sip-tcp-listener.js'
import { SipUdpListener } from './sip-udp-listener.js'

/** The TLS listener's settings (SIP_TLS_PORT, SIP_TLS_CERT, SIP_TLS_KEY), PEM text. */
export interface SipTlsOptions {
  /** 0 picks a free port (tests). */
  readonly port: number
  readonly cert: string
  readonly key: string
}

/** Where to listen; the endpoint's options of the same names. */
export interface SipListenOptions {
  readonly host: string
  /** UDP and TCP port; 0 picks a free port both can use. */
  readonly port: number
  readonly log: Log
  readonly tcpLimits?: SipTcpLimits
  readonly tls?: SipTlsOptions
}

/** What the sockets hand on: TCP and TLS messages and refusals, and UDP datagrams. */
export interface SipListenerEvents extends SipTcpEvents {
  readonly onDatagram: (bytes: Buffer, from: RemoteInfo) => void
}

/** The bound sockets. */
export interface SipListeners {
  readonly udp: SipUdpListener
  readonly tcp: SipTcpListener
  readonly tls: SipTcpListener | undefined
}

/** How many times a port 0 bind retries when TCP and UDP cannot get the same free port. */
const PORT_ATTEMPTS = 10

/** Binds UDP and TCP on the same port, and TLS on its own when configured. */
export async function bindSipListeners(options: SipListenOptions, events: SipListenerEvents): Promise<SipListeners> {
  const onUdpError = (error: Error): void => options.log.warn({ err: error }, 'SIP UDP socket error')
  const limits = options.tcpLimits ?? DEFAULT_TCP_LIMITS
  let lastError: unknown
  let bound: { tcp: SipTcpListener; udp: SipUdpListener } | undefined
  for (let attempt = 0; attempt < (options.port === 0 ? PORT_ATTEMPTS : 1); attempt++) {
    const tcp = await SipTcpListener.listen(options.host, options.port, events, limits)
    try {
      const udp = await SipUdpListener.bind(options.host, tcp.port, events.onDatagram, onUdpError)
      bound = { tcp, udp }
      break
    } catch (e) {
      lastError = e
      await tcp.close()
    }
  }
  if (bound === undefined) throw lastError
  const { tcp, udp } = bound
  let tls: SipTcpListener | undefined
  try {
    tls =
      options.tls &&
      (await SipTcpListener.listen(options.host, options.tls.port, events, limits, { cert: options.tls.cert, key: options.tls.key }))
  } catch (e) {
    await Promise.all([tcp.close(), udp.close()])
    throw e
  }
  return { udp, tcp, tls }
}
