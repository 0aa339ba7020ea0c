/**
 * `fetch` for webhooks under an {@link EgressPolicy}: host names resolve only to permitted addresses, and the
 * address a connection actually reached is checked before a byte of the request is sent (so DNS rebinding between
 * a check and the connection gains nothing). Built on undici (the engine of Node's own fetch) with a connector of
 * its own; the responses are Node's.
 *
 * Webhooks (which never follow redirects) go out through undici's `request`, not `fetch`: a turn's webhook through
 * fetch cost ~240 us more CPU (its Request, Headers and stream machinery; measured side by side against a local
 * SSE server, 414 against 177 us a request with the server's share). The reply is a standard `Response`
 * all the same, and failures look as fetch's do (a TypeError "fetch failed" with the cause; a body cut off errors
 * with "terminated", the cause behind it).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { Agent, buildConnector, type Dispatcher, request } from 'undici'
import type { FetchLike } from '../../pipeline/index.js'
import type { EgressPolicy } from './egress-policy.js'

/** A connection the egress policy refused; its message says why, never the URL (it may carry a token). */
export class EgressRefusedError extends Error {
  override readonly name = 'EgressRefusedError'
  readonly code = 'EGRESS_REFUSED'
}

/** `dns.lookup` as the policy asks it: every address of a name. Injectable, so a test can answer as a rebinding DNS would. */
export type EgressLookup = (
  hostname: string,
  options: { all: true },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void

/** How {@link egressFetch} resolves names, reports refusals and decorates requests to the gateway itself. */
export interface EgressFetchOptions {
  /**
   * Headers added to requests for the gateway's own addresses (its PUBLIC_URL origin, on the paths it may call
   * itself), made fresh for each request.
   */
  ownHeaders?: (() => Record<string, string>) | undefined
  /** Resolves host names; default `dns.lookup`. */
  lookup?: EgressLookup | undefined
  /** Told why each refused webhook was refused (an address and a rule, never the URL), for the operator's log. */
  onRefused?: ((why: string) => void) | undefined
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/** Most host names remembered as resolving to a private address; past it every name counts as private. */
const MAX_PRIVATE_HOSTS = 4096

/** What the connections learn for {@link egressFetch}'s `privateTarget`: the names that reached a private address. */
class PrivateHosts {
  readonly #names = new Set<string>()
  #full = false

  add(hostname: string): void {
    if (this.#names.size >= MAX_PRIVATE_HOSTS) this.#full = true
    else this.#names.add(hostKey(hostname))
  }

  has(hostname: string): boolean {
    // Forgetting a name would show what a private target said: once full, every name is private.
    return this.#full || this.#names.has(hostKey(hostname))
  }
}

function hostKey(hostname: string): string {
  return hostname.replace(/\.$/, '').toLowerCase()
}

/** What one agent's connections share: the policy, how names resolve, and where refusals and private names go. */
interface Connecting {
  policy: EgressPolicy
  lookup: EgressLookup
  privateHosts: PrivateHosts
  refused(why: string): EgressRefusedError
}

/** dns.lookup keeping only addresses the policy permits at `port` (a name resolving to a refused address fails). */
function policedLookup(c: Connecting, port: number | undefined, selfAllowed: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    c.lookup(hostname, { all: true }, (err, addresses) => {
      if (err) return callback(err, [])
      const allowed = addresses.filter((a) => c.policy.addressRefusal(a.address, port, selfAllowed) === undefined)
      if (allowed.length === 0) {
        const why = addresses[0] === undefined ? 'no address' : c.policy.addressRefusal(addresses[0].address, port, selfAllowed)
        return callback(c.refused(`webhook host refused by the egress policy: ${why}`), [])
      }
      if (allowed.some((a) => c.policy.isPrivate(a.address))) c.privateHosts.add(hostname)
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
function agentFor(c: Connecting, selfAllowed: boolean): Agent {
  return new Agent({
    connect: (opts, callback) => {
      const port = opts.port === '' || opts.port === undefined ? (opts.protocol === 'https:' ? 443 : 80) : Number(opts.port)
      const connect = buildConnector({ lookup: policedLookup(c, port, selfAllowed) } as buildConnector.BuildOptions)
      connect(opts, (err, socket) => {
        if (err !== null || socket === null) return callback(err ?? new Error('no socket'), null)
        const reached = socket.remoteAddress ?? ''
        const refusal = c.policy.addressRefusal(reached, socket.remotePort, selfAllowed)
        if (refusal !== undefined) {
          socket.destroy()
          return callback(c.refused(`webhook connection refused by the egress policy: ${refusal}`), null)
        }
        if (c.policy.isPrivate(reached)) c.privateHosts.add(opts.hostname)
        callback(null, socket)
      })
    },
  })
}

/** What {@link egressFetch} returns. */
export interface EgressHttp {
  fetch: FetchLike
  /**
   * Whether a webhook to `url` reached a private address (or would: its host is one, or localhost); the tunnel
   * relay on the gateway's own origin is not private. Asked after a request failed, to decide what its report shows.
   */
  privateTarget(url: string): boolean
  /** Closes the connection pools. */
  close(): Promise<void>
}

/** The policy's fetch, what it learnt about private targets, and a way to close its connection pools. */
export function egressFetch(policy: EgressPolicy, options: EgressFetchOptions = {}): EgressHttp {
  const ownHeaders: () => Record<string, string> = options.ownHeaders ?? (() => ({}))
  const onRefused = options.onRefused ?? (() => undefined)
  const connecting: Connecting = {
    policy,
    lookup: options.lookup ?? (dnsLookup as EgressLookup),
    privateHosts: new PrivateHosts(),
    refused: (why) => {
      onRefused(why)
      return new EgressRefusedError(why)
    },
  }
  const strict = agentFor(connecting, false)
  const self = agentFor(connecting, true)
  return {
    fetch: async (input, init) => {
      const url = new URL(input)
      const refusal = policy.urlRefusal(input)
      if (refusal !== undefined) {
        throw new TypeError('fetch failed', { cause: connecting.refused(`webhook refused by the egress policy: ${refusal}`) })
      }
      if (!policy.selfAllowed(url)) return send(input, init, strict)
      const headers = new Headers(init?.headers)
      if (policy.isOwnOrigin(url)) for (const [name, value] of Object.entries(ownHeaders())) headers.set(name, value)
      return send(input, { ...init, headers }, self)
    },
    privateTarget: (raw) => {
      let url: URL
      try {
        url = new URL(raw)
      } catch {
        return true
      }
      if (policy.isOwnOrigin(url) && policy.selfAllowed(url)) return false
      return policy.urlIsPrivate(url) || connecting.privateHosts.has(url.hostname)
    },
    close: async () => {
      await Promise.all([strict.close(), self.close()])
    },
  }
}

/** Statuses whose response has no body (a `Response` refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304])

/**
 * fetch(`input`, `init`) through `dispatcher`: on undici's `request` when fetch would not follow redirects and the
 * body is text or bytes (every webhook), else on fetch itself.
 */
async function send(input: string, init: RequestInit, dispatcher: Agent): Promise<Response> {
  const body = init.body
  const plain = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array
  if (init.redirect !== 'manual' || !plain) return fetch(input, { ...init, dispatcher } as RequestInit)
  const signal = init.signal ?? undefined
  let reply: Dispatcher.ResponseData
  try {
    reply = await request(input, {
      method: (init.method ?? 'GET') as Dispatcher.HttpMethod,
      headers: headerPairs(init.headers),
      body: body ?? null,
      signal,
      dispatcher,
    })
  } catch (error) {
    // As fetch: an abort rejects with the signal's reason, anything else is "fetch failed" with the cause.
    if (signal?.aborted) throw signal.reason
    throw new TypeError('fetch failed', { cause: error })
  }
  // The body's errors reach its reader (as the stream's rejection); this keeps one that nobody reads, or a body
  // destroyed on purpose, from being an uncaught 'error' event.
  reply.body.on('error', ignore)
  const headers = new Headers()
  for (const [name, value] of Object.entries(reply.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v)
    else if (value !== undefined) headers.append(name, value)
  }
  const status = reply.statusCode
  if (NULL_BODY_STATUSES.has(status) || init.method === 'HEAD') {
    // Read to its end (nothing, normally), so the connection can serve the next request.
    reply.body.dump().catch(ignore)
    return new Response(null, { status, headers })
  }
  try {
    return new Response(webStream(reply.body), { status, headers })
  } catch (error) {
    // A status fetch would not hand over either (outside 200-599).
    reply.body.destroy()
    throw new TypeError('fetch failed', { cause: error })
  }
}

function ignore(): void {}

/** Request headers as undici's `request` takes them. */
function headerPairs(init: RequestInit['headers']): Record<string, string> {
  if (init === undefined) return {}
  // A plain record as it is; Headers and lists of pairs as Headers reads them (repeated names joined).
  if (!(init instanceof Headers) && !Array.isArray(init)) return init as Record<string, string>
  return Object.fromEntries(init instanceof Headers ? init : new Headers(init))
}

/**
 * A Node body as a web stream, read as the reader asks (backpressure); an error mid-body reaches the reader as
 * fetch's does, a TypeError "terminated" whose cause says why.
 */
function webStream(body: Dispatcher.ResponseData['body']): ReadableStream<Uint8Array> {
  const chunks = body[Symbol.asyncIterator]()
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = (await chunks.next()) as IteratorResult<Buffer>
          if (next.done === true) controller.close()
          else controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.byteLength))
        } catch (error) {
          controller.error(new TypeError('terminated', { cause: error }))
        }
      },
      cancel() {
        body.destroy()
      },
    },
    { highWaterMark: 0 },
  )
}

/** The egress refusal behind a failed fetch, if that is why it failed. */
export function egressRefusalOf(e: unknown): EgressRefusedError | undefined {
  for (let c: unknown = e; c instanceof Error; c = c.cause) if (c instanceof EgressRefusedError) return c
  return undefined
}
