/**
 * `fetch` for webhooks under an {@link EgressPolicy}: host names resolve only to permitted addresses, and the
 * address a connection actually reached is checked before a byte of the request is sent (so DNS rebinding between
 * a check and the connection gains nothing). Built on undici (the engine of Node's own fetch) with a connector of
 * its own; the responses are Node's.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { Agent, buildConnector } from 'undici'
import type { FetchLike } from '../../pipeline/index.js'
import type { EgressPolicy } from './egress-policy.js'

/** A connection the egress policy refused; its message says why, never the URL (it may carry a token). */
export class EgressRefusedError extends Error {
  override readonly name = 'EgressRefusedError'
  readonly code = 'EGRESS_REFUSED'
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/** dns.lookup keeping only addresses the policy permits at `port` (a name resolving to a refused address fails). */
function policedLookup(policy: EgressPolicy, port: number | undefined, selfAllowed: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, [])
      const allowed = addresses.filter((a) => policy.addressRefusal(a.address, port, selfAllowed) === undefined)
      if (allowed.length === 0) {
        const why = addresses[0] === undefined ? 'no address' : policy.addressRefusal(addresses[0].address, port, selfAllowed)
        return callback(new EgressRefusedError(`webhook host refused by the egress policy: ${why}`), [])
      }
      if (options.all) return callback(null, allowed)
      const first = allowed[0] as LookupAddress
      callback(null, first.address, first.family)
    })
  }
}

/**
 * An undici agent whose connections resolve through the policy (knowing the port) and are checked again once
 * connected, on the address actually reached.
 */
function agentFor(policy: EgressPolicy, selfAllowed: boolean): Agent {
  return new Agent({
    connect: (opts, callback) => {
      const port = opts.port === '' || opts.port === undefined ? (opts.protocol === 'https:' ? 443 : 80) : Number(opts.port)
      const connect = buildConnector({ lookup: policedLookup(policy, port, selfAllowed) } as buildConnector.BuildOptions)
      connect(opts, (err, socket) => {
        if (err !== null || socket === null) return callback(err ?? new Error('no socket'), null)
        const refusal = policy.addressRefusal(socket.remoteAddress ?? '', socket.remotePort, selfAllowed)
        if (refusal !== undefined) {
          socket.destroy()
          return callback(new EgressRefusedError(`webhook connection refused by the egress policy: ${refusal}`), null)
        }
        callback(null, socket)
      })
    },
  })
}

/**
 * The policy's fetch and a way to close its connection pools. `ownHeaders`: headers added to requests for the
 * gateway's own addresses (its PUBLIC_URL origin, on the paths it may call itself), made fresh for each request.
 */
export function egressFetch(
  policy: EgressPolicy,
  ownHeaders: () => Record<string, string> = () => ({}),
): { fetch: FetchLike; close(): Promise<void> } {
  const strict = agentFor(policy, false)
  const self = agentFor(policy, true)
  return {
    fetch: async (input, init) => {
      const url = new URL(input)
      const refusal = policy.urlRefusal(input)
      if (refusal !== undefined) {
        throw new TypeError('fetch failed', { cause: new EgressRefusedError(`webhook refused by the egress policy: ${refusal}`) })
      }
      if (!policy.selfAllowed(url)) return fetch(input, { ...init, dispatcher: strict } as RequestInit)
      const headers = new Headers(init?.headers)
      if (policy.isOwnOrigin(url)) for (const [name, value] of Object.entries(ownHeaders())) headers.set(name, value)
      return fetch(input, { ...init, headers, dispatcher: self } as RequestInit)
    },
    close: async () => {
      await Promise.all([strict.close(), self.close()])
    },
  }
}

/** The egress refusal behind a failed fetch, if that is why it failed. */
export function egressRefusalOf(e: unknown): EgressRefusedError | undefined {
  for (let c: unknown = e; c instanceof Error; c = c.cause) if (c instanceof EgressRefusedError) return c
  return undefined
}
