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

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d, in any spelling) as the IPv4 address it is; any other unchanged. */
export function unmappedAddress(ip: string): string {
  const embedded = embeddedIpv4(ip)
  return embedded?.form === 'mapped' ? embedded.ipv4 : ip
}

/**
 * The IPv4 address an IPv6 address reaches: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) or NAT64
 * (64:ff9b::a.b.c.d), in any spelling (the egress rules check that one); undefined for any other address.
 */
export function embeddedIpv4(ip: string): { ipv4: string; form: 'mapped' | 'compatible' | 'nat64' } | undefined {
  if (isIP(ip) !== 6) return undefined
  // The URL parser writes an IPv6 address one way (lower case, zeros compressed, an IPv4 tail in hex).
  let canonical: string
  try {
    canonical = new URL(`http://[${ip}]/`).hostname.slice(1, -1)
  } catch {
    return undefined
  }
  const m = /^(::ffff:|::|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical)
  if (m === null) return undefined
  const high = Number.parseInt(m[2] as string, 16)
  const low = Number.parseInt(m[3] as string, 16)
  const form = m[1] === '::ffff:' ? 'mapped' : m[1] === '::' ? 'compatible' : 'nat64'
  return { ipv4: `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, form }
}
