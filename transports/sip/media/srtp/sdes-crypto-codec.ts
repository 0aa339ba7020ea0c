/**
 * Pure codec for the SDES `a=crypto` attribute (RFC 4568 section 9.1) as sdp-transform splits it: the tag, the
 * crypto suite, the key parameters (`inline:<base64 of the 16-octet master key and 14-octet master salt>`, an
 * optional `|lifetime` and `|MKI:length`) and the session parameters. Only what we can honour decodes: one of our
 * two suites, exactly one key of 30 octets, no MKI (our packets carry none), and no session parameter that
 * changes the packet format (UNENCRYPTED_SRTP, UNAUTHENTICATED_SRTP, a KDR other than 0, FEC_ORDER, FEC_KEY);
 * anything else is `null`, and the offer's next crypto line is tried (section 6.1: an answerer picks one it
 * supports). Keys are opaque bytes here and never appear in an error.
 */
import { SRTP_SUITES, type SrtpSuite } from './srtp-context.js'
import { SRTP_KEY_BYTES, SRTP_SALT_BYTES } from './srtp-key-derivation.js'

/** One usable crypto line. */
export interface SdesCrypto {
  /** The tag (1 to 9 digits) the answer repeats for the line it accepts. */
  readonly tag: number
  readonly suite: SrtpSuite
  /** The master key, then the master salt: 30 octets. */
  readonly keySalt: Buffer
}

/** A crypto line as sdp-transform reads and writes it. */
export interface SdpCryptoLine {
  id: number
  suite: string
  config: string
  sessionConfig?: string | undefined
}

/** Octets of an SDES key and salt together. */
export const SDES_KEY_SALT_BYTES = SRTP_KEY_BYTES + SRTP_SALT_BYTES

/** Session parameters that leave the packets as we send and read them (section 6.3; WSH only sizes our window). */
const HARMLESS_SESSION_PARAM = /^(?:WSH=\d+|UNENCRYPTED_SRTCP)$/i

/** Decodes one line; null when it is not one we can use. */
export function decodeSdesCrypto(line: SdpCryptoLine): SdesCrypto | null {
  if (!Number.isInteger(line.id) || line.id < 0 || line.id > 999_999_999) return null
  const suite = SRTP_SUITES.find((s) => s === line.suite.toUpperCase())
  if (suite === undefined) return null
  const session = (line.sessionConfig ?? '').split(/\s+/).filter((p) => p !== '')
  if (!session.every((p) => HARMLESS_SESSION_PARAM.test(p) || /^KDR=0$/i.test(p))) return null
  // Several key parameters mean several master keys told apart by MKI: not supported.
  if (line.config.includes(';')) return null
  const m = /^inline:([A-Za-z0-9+/]+={0,2})((?:\|[^|]*){0,2})$/.exec(line.config)
  if (m === null) return null
  for (const part of m[2]!.split('|').slice(1)) {
    // A lifetime (`2^31` or a decimal) is fine: no call comes near 2^31 packets. An MKI field is not.
    if (part.includes(':') || !/^(?:2\^\d{1,2}|\d{1,20})$/.test(part)) return null
  }
  const keySalt = Buffer.from(m[1]!, 'base64')
  if (keySalt.length !== SDES_KEY_SALT_BYTES) return null
  return { tag: line.id, suite, keySalt }
}

/** Encodes our line: the tag, the suite and `inline:` with the key and salt, no lifetime, no MKI. */
export function encodeSdesCrypto(crypto: SdesCrypto): SdpCryptoLine {
  return { id: crypto.tag, suite: crypto.suite, config: `inline:${crypto.keySalt.toString('base64')}` }
}
