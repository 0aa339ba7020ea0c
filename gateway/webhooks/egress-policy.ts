/**
 * Where webhooks (agent and lifecycle) may connect: an organization must not reach the gateway's own network
 * through them. Refused by default: link-local and cloud metadata addresses, "this network", multicast and
 * broadcast, and the gateway's own listeners (a local address at its own port), except the tunnel relay paths,
 * which only reach a connected CLI. `WEBHOOK_DENY_CIDRS` refuses more; `WEBHOOK_ALLOW_CIDRS` lets chosen ranges
 * past the built-in rules (never past the deny list, never to the gateway itself). Checked on the address a
 * connection actually reaches (DNS rebinding), and on URLs at configuration time where the host says enough.
 */
import { BlockList, isIP } from 'node:net'
import { networkInterfaces } from 'node:os'
import type { FetchLike } from '../../pipeline/index.js'
import { parseCidr, unmappedAddress } from '../../core/cidr.js'

/** Built-in refusals, with why. */
const BUILT_IN: { cidr: string; why: string }[] = [
  { cidr: '0.0.0.0/8', why: '"this network" (0.0.0.0 reaches the host itself)' },
  { cidr: '169.254.0.0/16', why: 'link-local (cloud metadata services live at 169.254.169.254)' },
  { cidr: '100.100.100.200/32', why: 'a cloud metadata service' },
  { cidr: '224.0.0.0/4', why: 'multicast' },
  { cidr: '255.255.255.255/32', why: 'broadcast' },
  { cidr: '::/128', why: 'the unspecified address' },
  { cidr: 'fe80::/10', why: 'link-local' },
  { cidr: 'fd00:ec2::254/128', why: 'a cloud metadata service' },
  { cidr: 'ff00::/8', why: 'multicast' },
]

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
  allowCidrs?: readonly string[]
  denyCidrs?: readonly string[]
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
    const address = unmappedAddress(ip)
    const family = familyOf(address)
    if (family === undefined) return `${ip} is not an IP address`
    if (this.#deny.check(address, family)) return `${address} is in WEBHOOK_DENY_CIDRS`
    if (port !== undefined && port === this.#ownPort() && !selfAllowed && this.#local.check(address, family)) {
      return `${address}:${port} is the gateway itself`
    }
    if (this.#allow.check(address, family)) return undefined
    const hit = this.#builtIn.find((b) => b.list.check(address, family))
    return hit === undefined ? undefined : `${address} is ${hit.why}`
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
    const host = url.hostname.replace(/^\[|\]$/g, '')
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port)
    if (host.toLowerCase() === 'localhost' || host.toLowerCase().endsWith('.localhost')) {
      return this.addressRefusal('127.0.0.1', port, selfAllowed)
    }
    return isIP(host) === 0 ? undefined : this.addressRefusal(host, port, selfAllowed)
  }
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
}
