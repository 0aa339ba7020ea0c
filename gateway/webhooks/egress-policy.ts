/**
 * Where webhooks (agent and lifecycle) and outbound SIP trunks may connect: an organization must not reach the
 * gateway's own network through them. Refused by default: loopback and this machine's own addresses (the gateway's
 * own port always), the private ranges (RFC 1918, carrier-grade NAT, unique-local IPv6), link-local and cloud metadata
 * addresses, "this network", multicast and broadcast; an IPv6 address carrying an IPv4 one (mapped, compatible,
 * NAT64) is checked as that IPv4 address. The tunnel relay paths may reach the gateway itself (they only reach a
 * connected CLI). `EGRESS_DENY_CIDRS` refuses more; `EGRESS_ALLOW_CIDRS` lets chosen ranges past the built-in rules
 * (never past the deny list, never to the gateway itself); `ALLOW_INSECURE_WEBHOOKS` (development) lets loopback
 * through. Checked on the address a connection actually reaches (DNS rebinding), and on URLs at configuration time
 * where the host says enough (the URL parser has already made 2130706433, 0x7f000001 or 127.1 into 127.0.0.1).
 */
import { BlockList, isIP } from 'node:net'
import { networkInterfaces } from 'node:os'
import type { FetchLike } from '../../pipeline/index.js'
import { embeddedIpv4, parseCidr } from '../../core/cidr.js'

/** Built-in refusals, with why. */
const BUILT_IN: { cidr: string; why: string }[] = [
  // The most specific first: the first match names the refusal.
  { cidr: '100.100.100.200/32', why: 'a cloud metadata service' },
  { cidr: 'fd00:ec2::254/128', why: 'a cloud metadata service' },
  { cidr: '0.0.0.0/8', why: '"this network" (0.0.0.0 reaches the host itself)' },
  { cidr: '10.0.0.0/8', why: 'a private network (RFC 1918)' },
  { cidr: '172.16.0.0/12', why: 'a private network (RFC 1918)' },
  { cidr: '192.168.0.0/16', why: 'a private network (RFC 1918)' },
  { cidr: '100.64.0.0/10', why: 'shared address space (carrier-grade NAT)' },
  { cidr: '169.254.0.0/16', why: 'link-local (cloud metadata services live at 169.254.169.254)' },
  { cidr: '224.0.0.0/4', why: 'multicast' },
  { cidr: '255.255.255.255/32', why: 'broadcast' },
  { cidr: '240.0.0.0/4', why: 'reserved' },
  { cidr: '::/128', why: 'the unspecified address' },
  { cidr: 'fc00::/7', why: 'a unique-local IPv6 network' },
  { cidr: 'fec0::/10', why: 'a site-local IPv6 network' },
  { cidr: '64:ff9b:1::/48', why: 'a local-use NAT64 network' },
  { cidr: 'fe80::/10', why: 'link-local' },
  { cidr: 'ff00::/8', why: 'multicast' },
]

/** Loopback: refused like the built-in ranges, except under ALLOW_INSECURE_WEBHOOKS (a developer's own backend). */
const LOOPBACK = ['127.0.0.0/8', '::1/128']
const LOOPBACK_WHY = 'loopback (this machine; ALLOW_INSECURE_WEBHOOKS lets it through in development)'

/** addressRefusal's kept answer for an allowed address (a refusal is never empty). */
const ALLOWED = ''
/** Most answers kept; past it they are dropped and found again (webhook hosts are few; a bound all the same). */
const MAX_KEPT_ANSWERS = 1024

function blockList(cidrs: readonly string[]): BlockList {
  const list = new BlockList()
  for (const c of cidrs) {
    const { address, prefix, family } = parseCidr(c)
    list.addSubnet(address, prefix, family)
  }
  return list
}

function familyOf(ip: string): 'ipv4' | 'ipv6' | undefined {
  const v = isIP(ip)
  return v === 4 ? 'ipv4' : v === 6 ? 'ipv6' : undefined
}

export interface EgressPolicyOptions {
  /** The port the gateway listens on (every worker shares it); a function when it is known only once listening. */
  ownPort: number | (() => number)
  /** PUBLIC_URL: URLs with its origin reach the gateway (through a balancer, perhaps) whatever they resolve to. */
  publicUrl: string
  /** `EGRESS_ALLOW_CIDRS`: ranges let past the built-in rules (a backend that really lives on a private network). */
  allowCidrs?: readonly string[]
  /** `EGRESS_DENY_CIDRS`: ranges refused on top of the built-in rules, whatever else allows them. */
  denyCidrs?: readonly string[]
  /** `ALLOW_INSECURE_WEBHOOKS` (development only): loopback (127.0.0.0/8, ::1, localhost) is let through. */
  allowLoopback?: boolean
  /** Paths on the gateway itself a webhook may call (the tunnel relay). */
  selfPathPrefixes?: readonly string[]
  /** Addresses of this machine; default: loopback, the unspecified addresses and every interface's address. */
  localAddresses?: readonly string[]
}

/** The egress rules of one gateway process. */
export class EgressPolicy {
  readonly #ownPort: () => number
  readonly #publicOrigin: string
  readonly #allow: BlockList
  readonly #deny: BlockList
  readonly #builtIn: { list: BlockList; why: string }[]
  readonly #loopback: BlockList
  readonly #allowLoopback: boolean
  readonly #local: BlockList
  readonly #selfPaths: readonly string[]
  /** addressRefusal's answers so far (ALLOWED for none), at most MAX_KEPT_ANSWERS. */
  readonly #answers = new Map<string, string>()

  constructor(o: EgressPolicyOptions) {
    const port = o.ownPort
    this.#ownPort = typeof port === 'number' ? () => port : port
    this.#publicOrigin = new URL(o.publicUrl).origin
    this.#allow = blockList(o.allowCidrs ?? [])
    this.#deny = blockList(o.denyCidrs ?? [])
    this.#builtIn = BUILT_IN.map((b) => ({ list: blockList([b.cidr]), why: b.why }))
    this.#loopback = blockList(LOOPBACK)
    this.#allowLoopback = o.allowLoopback === true
    this.#selfPaths = o.selfPathPrefixes ?? []
    const local = ['127.0.0.0/8', '::1/128', '0.0.0.0/32', '::/128']
    const interfaces = o.localAddresses ?? Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address))
    for (const a of interfaces) local.push(a.replace(/%.*$/, ''))
    this.#local = blockList(local)
  }

  /** Whether `url` is on the gateway's own PUBLIC_URL origin. */
  isOwnOrigin(url: URL): boolean {
    return url.origin === this.#publicOrigin
  }

  /** Whether a webhook to `url` may reach the gateway itself (its tunnel relay paths only). */
  selfAllowed(url: URL): boolean {
    return this.#selfPaths.some((p) => url.pathname.startsWith(p))
  }

  /** Why connecting to `ip`:`port` is refused, or undefined. `selfAllowed`: the gateway's own port is fine. */
  addressRefusal(ip: string, port: number | undefined, selfAllowed = false): string | undefined {
    // Asked for every webhook request (its URL) and connection: the answer is kept, keyed by all it depends on
    // (the gateway's own port included: it may become known only once listening). Checking a BlockList parses the
    // address again each time.
    const key = `${ip} ${port} ${selfAllowed} ${this.#ownPort()}`
    const known = this.#answers.get(key)
    if (known !== undefined) return known === ALLOWED ? undefined : known
    const answer = this.#addressRefusal(ip, port, selfAllowed)
    if (this.#answers.size >= MAX_KEPT_ANSWERS) this.#answers.clear()
    this.#answers.set(key, answer ?? ALLOWED)
    return answer
  }

  #addressRefusal(ip: string, port: number | undefined, selfAllowed: boolean): string | undefined {
    const written = ip.replace(/%.*$/, '')
    const writtenFamily = familyOf(written)
    if (writtenFamily === undefined) return `${ip} is not an IP address`
    // An IPv6 address carrying an IPv4 one reaches that IPv4 address: the rules are checked on it.
    const address = embeddedIpv4(written)?.ipv4 ?? written
    const family = familyOf(address) ?? writtenFamily
    const on = (list: BlockList) => list.check(address, family) || list.check(written, writtenFamily)
    if (on(this.#deny)) return `${address} is in EGRESS_DENY_CIDRS`
    if (port !== undefined && port === this.#ownPort() && on(this.#local)) {
      // The tunnel relay paths reach only a connected CLI: the one way to the gateway itself, whatever else says.
      return selfAllowed ? undefined : `${address}:${port} is the gateway itself`
    }
    if (this.#allow.check(address, family)) return undefined
    if (this.#loopback.check(address, family)) return this.#allowLoopback ? undefined : `${address} is ${LOOPBACK_WHY}`
    const hit = this.#builtIn.find((b) => b.list.check(address, family))
    if (hit !== undefined) return `${address} is ${hit.why}`
    // A public address of this machine reaches services that listen on every interface, past any firewall.
    return this.#local.check(address, family) ? `${address} is this machine` : undefined
  }

  /**
   * Whether `ip` is on the gateway's side of the network: loopback, this machine, or a range the built-in rules
   * refuse, whatever the allow lists say. A failure there reports nothing the target said (debug_failures
   * included) and one word for every connection failure, so webhooks cannot read or port-scan internal services.
   */
  isPrivate(ip: string): boolean {
    const written = ip.replace(/%.*$/, '')
    const address = embeddedIpv4(written)?.ipv4 ?? written
    const family = familyOf(address)
    if (family === undefined) return true
    if (this.#loopback.check(address, family) || this.#local.check(address, family)) return true
    return this.#builtIn.some((b) => b.list.check(address, family))
  }

  /**
   * Why a webhook URL is refused from what it says (an address, localhost, the gateway's own origin), or
   * undefined; a host name is checked again on every connection.
   */
  urlRefusal(raw: string): string | undefined {
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      return undefined // the URL's own validation says why
    }
    const selfAllowed = this.selfAllowed(url)
    if (url.origin === this.#publicOrigin && !selfAllowed) return 'points at the gateway itself (PUBLIC_URL)'
    const host = hostOf(url)
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port)
    if (isLocalhostName(host)) return this.addressRefusal('127.0.0.1', port, selfAllowed)
    return isIP(host) === 0 ? undefined : this.addressRefusal(host, port, selfAllowed)
  }

  /**
   * Whether `url` is known to be private from what it says (an address, localhost); the tunnel relay on the
   * gateway's own origin is not (it reaches the organization's own CLI). A host name is known once connected.
   */
  urlIsPrivate(url: URL): boolean {
    if (this.isOwnOrigin(url) && this.selfAllowed(url)) return false
    const host = hostOf(url)
    if (isLocalhostName(host)) return true
    return isIP(host) !== 0 && this.isPrivate(host)
  }
}

/** A URL's host as an address or a name: brackets and a trailing dot dropped, lower case. */
function hostOf(url: URL): string {
  return url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase()
}

/** `localhost` and its subdomains, which resolve to loopback (RFC 6761) without asking DNS. */
function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost')
}

/** A pipeline configuration (or override) as far as its webhook URLs go. */
interface WithWebhookUrls {
  plugins?: readonly { use: string; options?: unknown }[] | undefined
  session_webhook?: { url?: string | undefined } | undefined
}

/** The webhook URLs of a configuration the policy refuses, each as `field: why` (empty when none). */
export function configUrlRefusals(policy: EgressPolicy | undefined, config: unknown, field = 'config'): string[] {
  if (policy === undefined || typeof config !== 'object' || config === null) return []
  const c = config as WithWebhookUrls
  const found: string[] = []
  c.plugins?.forEach((p, i) => {
    const url = (p.options as { url?: unknown } | undefined)?.url
    if (p.use !== 'agent.webhook' || typeof url !== 'string') return
    const why = policy.urlRefusal(url)
    if (why !== undefined) found.push(`${field}.plugins[${i}].options.url: ${why}`)
  })
  const hook = c.session_webhook?.url
  if (typeof hook === 'string') {
    const why = policy.urlRefusal(hook)
    if (why !== undefined) found.push(`${field}.session_webhook.url: ${why}`)
  }
  return found
}

/** What sends webhooks in a gateway process: the policy, and the fetch that enforces it on every connection. */
export interface WebhookEgress {
  policy: EgressPolicy
  fetch: FetchLike
  /** Whether a webhook to `url` reached (or would reach) a private address; see {@link EgressPolicy.isPrivate}. */
  privateTarget(url: string): boolean
}
