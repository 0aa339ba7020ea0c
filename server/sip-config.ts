/** The SIP endpoint's settings read from the environment (`SIP_*`, `RTP_PORT_*`), checked at start-up. */
import { readFileSync } from 'node:fs'
import { createPrivateKey, X509Certificate } from 'node:crypto'
import { createSecureContext } from 'node:tls'
import { bool, ConfigError, type Env, int, optionalInt, str } from './config-env.js'
import { rtpPortRangeCheck } from './rtp-port-range.js'

/** The SIP endpoint's settings (docs/reference/sip.md, "The endpoint"). */
export interface SipSettings {
  /** UDP and TCP port (`SIP_PORT`). */
  port: number
  /** Bind address (`SIP_HOST`). */
  host: string
  /** The host put in Via, Contact and later SDP (`SIP_PUBLIC_HOST`; default: PUBLIC_URL's host). */
  publicHost: string
  /** The RTP port range (`RTP_PORT_MIN`/`RTP_PORT_MAX`) as set: RTP takes its even ports whose odd neighbour is inside it. */
  rtpPortMin: number
  rtpPortMax: number
  /** The TLS listener (`SIP_TLS_PORT`, `SIP_TLS_CERT`, `SIP_TLS_KEY`: PEM text read at start-up); undefined: no TLS. */
  tls: { port: number; cert: string; key: string } | undefined
  /** CA certificates (PEM) trusted beside the built-in ones for trunks dialled over TLS (`SIP_TLS_CA`). */
  tlsCa: string | undefined
  /** Silence from a call's peer (no RTP, no RTCP, not on hold) that hangs it up (`SIP_MEDIA_TIMEOUT_S`); 0: never. */
  mediaTimeoutS: number
  /** Offer and accept RFC 3389 comfort noise, suppressing silence toward peers that take it (`SIP_COMFORT_NOISE`, on). */
  comfortNoise: boolean
}

/** A host name or an IPv4/IPv6 address (IPv6 may be bracketed). */
const HOST_PATTERN = /^(?:[\w.-]+|\[?[0-9A-Fa-f:.]+\]?)$/

/** The SIP settings, each checked even when SIP_PORT is unset, so a typo is named before anyone turns SIP on. */
export function sipSettings(env: Env, publicUrl: string, warnings: string[]): SipSettings | undefined {
  const host = str(env, 'SIP_HOST') ?? '0.0.0.0'
  if (!HOST_PATTERN.test(host)) throw new ConfigError('SIP_HOST', `is not a host name or address: "${host}"`)
  const publicHost = str(env, 'SIP_PUBLIC_HOST') ?? new URL(publicUrl).hostname.replace(/^\[|\]$/g, '')
  if (!HOST_PATTERN.test(publicHost)) throw new ConfigError('SIP_PUBLIC_HOST', `is not a host name or address: "${publicHost}"`)
  const rtpPortMin = int(env, 'RTP_PORT_MIN', 10_000, 1024, 65534)
  const rtpPortMax = int(env, 'RTP_PORT_MAX', 20_000, 1025, 65535)
  if (rtpPortMin >= rtpPortMax) throw new ConfigError('RTP_PORT_MAX', `must be above RTP_PORT_MIN (${rtpPortMin}), got ${rtpPortMax}`)
  const rtpRange = rtpPortRangeCheck(rtpPortMin, rtpPortMax)
  if (rtpRange.error !== undefined) throw new ConfigError('RTP_PORT_MAX', rtpRange.error)
  if (rtpRange.warning !== undefined) warnings.push(rtpRange.warning)
  const tlsPort = optionalInt(env, 'SIP_TLS_PORT', 0, 65535)
  const tls = tlsPort === undefined ? noTlsFiles(env) : tlsSettings(env, tlsPort)
  const tlsCa = pemFile(env, 'SIP_TLS_CA')
  if (tlsCa !== undefined) certificates(tlsCa, 'SIP_TLS_CA')
  const mediaTimeoutS = int(env, 'SIP_MEDIA_TIMEOUT_S', 30, 0, 3600)
  const comfortNoise = str(env, 'SIP_COMFORT_NOISE') === undefined ? true : bool(env, 'SIP_COMFORT_NOISE')
  if (str(env, 'SIP_PORT') === undefined) {
    if (tlsPort !== undefined) throw new ConfigError('SIP_TLS_PORT', 'is set but SIP_PORT is not: TLS is a SIP listener beside UDP and TCP')
    return undefined
  }
  // 0, as for PORT: a free port, where UDP and TCP both bind (the endpoint logs it); tests use it.
  const port = int(env, 'SIP_PORT', 5060, 0, 65535)
  if (tls !== undefined && port !== 0 && tls.port === port) throw new ConfigError('SIP_TLS_PORT', `must differ from SIP_PORT (${port})`)
  return { port, host, publicHost: publicHost.replace(/^\[|\]$/g, ''), rtpPortMin, rtpPortMax, tls, tlsCa, mediaTimeoutS, comfortNoise }
}

/** Without SIP_TLS_PORT, a certificate or key alone is a mistake worth naming. */
function noTlsFiles(env: Env): undefined {
  for (const name of ['SIP_TLS_CERT', 'SIP_TLS_KEY']) {
    if (str(env, name) !== undefined) throw new ConfigError(name, 'is set but SIP_TLS_PORT is not: set the TLS port too')
  }
  return undefined
}

/** The certificate and key, read and checked: each parses, and the key is the certificate's. */
function tlsSettings(env: Env, port: number): { port: number; cert: string; key: string } {
  const cert = pemFile(env, 'SIP_TLS_CERT')
  if (cert === undefined) throw new ConfigError('SIP_TLS_CERT', 'is required with SIP_TLS_PORT (a PEM certificate file)')
  const key = pemFile(env, 'SIP_TLS_KEY')
  if (key === undefined) throw new ConfigError('SIP_TLS_KEY', 'is required with SIP_TLS_PORT (a PEM private key file)')
  certificates(cert, 'SIP_TLS_CERT')
  try {
    createPrivateKey(key)
  } catch (e) {
    throw new ConfigError('SIP_TLS_KEY', `is not a PEM private key: ${(e as Error).message}`)
  }
  try {
    createSecureContext({ cert, key })
  } catch (e) {
    throw new ConfigError('SIP_TLS_KEY', `does not match SIP_TLS_CERT: ${(e as Error).message}`)
  }
  return { port, cert, key }
}

/** A file's text, named by a variable; undefined when the variable is unset. */
function pemFile(env: Env, name: string): string | undefined {
  const path = str(env, name)
  if (path === undefined) return undefined
  try {
    return readFileSync(path, 'utf8')
  } catch (e) {
    throw new ConfigError(name, `cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message} (${path})`)
  }
}

/** Checks that `pem` holds at least one certificate and that each parses. */
function certificates(pem: string, name: string): void {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  if (blocks.length === 0) throw new ConfigError(name, 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)')
  for (const block of blocks) {
    try {
      new X509Certificate(block)
    } catch (e) {
      throw new ConfigError(name, `holds a certificate that does not parse: ${(e as Error).message}`)
    }
  }
}
