/**
 * CIDR ranges: one parser for every allow- and deny-list (webhook egress, SIP trunks), here in the core so the
 * store and the API parse the same way without importing each other.
 */
import { isIP } from 'node:net'

/** A parsed range: the address as written and its prefix length. */
export interface Cidr {
  readonly address: string
  readonly prefix: number
  readonly family: 'ipv4' | 'ipv6'
}

/** Parses `a.b.c.d/n` or `v6/n` (a bare address is /32 or /128); throws with the reason. */
export function parseCidr(raw: string): Cidr {
  const [address = '', prefixText] = raw.trim().split('/')
  const version = isIP(address)
  if (version === 0) throw new Error(`"${raw}" is not an IP address or CIDR range`)
  const max = version === 4 ? 32 : 128
  const prefix = prefixText === undefined ? max : Number(prefixText)
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (prefixText !== undefined && !/^\d+$/.test(prefixText))) {
    throw new Error(`"${raw}" has a prefix length outside 0-${max}`)
  }
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' }
}

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d) as the IPv4 address it is; any other address unchanged. */
export function unmappedAddress(ip: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  return m?.[1] ?? ip
}
