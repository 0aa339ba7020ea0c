/**
 * SIP Digest authentication (RFC 3261 section 22.4 on RFC 2617, with RFC 7616's SHA-256 as RFC 8760 brings it to
 * SIP), qop=auth only: the client side answers a 401/407 from an outbound trunk, the server side challenges and
 * checks an inbound trunk's INVITE. auth-int (a hash of the body) is not offered and not answered.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { type AuthHeader, formatAuthHeader, parseAuthHeader } from '../message/digest-header-codec.js'
import { NonceCounts } from './digest-nonce-counts.js'

/** The digest algorithms supported, strongest first (RFC 8760 section 2.3: offer in order of preference). */
export const DIGEST_ALGORITHMS = ['SHA-256', 'MD5'] as const

/** A supported algorithm name as written in the `algorithm` parameter. */
export type DigestAlgorithm = (typeof DIGEST_ALGORITHMS)[number]

/** Lower-case hex digest of `data` with `algorithm`. */
export function digestHash(algorithm: DigestAlgorithm, data: string): string {
  return createHash(algorithm === 'MD5' ? 'md5' : 'sha256')
    .update(data, 'utf8')
    .digest('hex')
}

/** HA1 = H(username:realm:password): what a server may store instead of the password. */
export function digestHa1(algorithm: DigestAlgorithm, username: string, realm: string, password: string): string {
  return digestHash(algorithm, `${username}:${realm}:${password}`)
}

/** The inputs of a response digest. */
export interface DigestInput {
  readonly algorithm: DigestAlgorithm
  /** H(username:realm:password). */
  readonly ha1: string
  readonly method: string
  readonly uri: string
  readonly nonce: string
  /** With qop=auth, the nonce count (8 hex digits) and client nonce; without, RFC 2069 compatibility. */
  readonly qop?: { readonly nc: string; readonly cnonce: string } | undefined
}

/** The `response` parameter: KD(HA1, nonce:nc:cnonce:qop:HA2), or KD(HA1, nonce:HA2) without qop. */
export function digestResponse(input: DigestInput): string {
  const ha2 = digestHash(input.algorithm, `${input.method}:${input.uri}`)
  const middle = input.qop === undefined ? input.nonce : `${input.nonce}:${input.qop.nc}:${input.qop.cnonce}:auth`
  return digestHash(input.algorithm, `${input.ha1}:${middle}:${ha2}`)
}

function algorithmOf(name: string | undefined): DigestAlgorithm | null {
  if (name === undefined) return 'MD5'
  return DIGEST_ALGORITHMS.find((a) => a.toLowerCase() === name.toLowerCase()) ?? null
}

// ---- Client side: answer a 401 / 407 ----

/** A challenge this side can answer, from a WWW-Authenticate or Proxy-Authenticate value. */
export interface DigestChallenge {
  readonly algorithm: DigestAlgorithm
  readonly realm: string
  readonly nonce: string
  readonly opaque?: string | undefined
  /** Whether the server offered qop=auth (we then always use it). */
  readonly qopAuth: boolean
  readonly stale: boolean
}

/**
 * Picks the strongest challenge we can answer among a response's challenge header values; `null` when none is a
 * Digest challenge with a supported algorithm and, if qop is given, `auth` among its options.
 */
export function pickChallenge(values: readonly string[]): DigestChallenge | null {
  let best: DigestChallenge | null = null
  for (const value of values) {
    const header = parseAuthHeader(value)
    if (header === null || header.scheme.toLowerCase() !== 'digest') continue
    const algorithm = algorithmOf(header.params.get('algorithm'))
    const realm = header.params.get('realm')
    const nonce = header.params.get('nonce')
    const qop = header.params.get('qop')
    const qopAuth = qop?.split(',').some((q) => q.trim().toLowerCase() === 'auth') === true
    if (algorithm === null || realm === undefined || nonce === undefined || (qop !== undefined && !qopAuth)) continue
    const challenge = {
      algorithm,
      realm,
      nonce,
      opaque: header.params.get('opaque'),
      qopAuth,
      stale: header.params.get('stale')?.toLowerCase() === 'true',
    }
    if (best === null || DIGEST_ALGORITHMS.indexOf(algorithm) < DIGEST_ALGORITHMS.indexOf(best.algorithm)) best = challenge
  }
  return best
}

/** What the client knows when it answers a challenge. */
export interface DigestCredentials {
  readonly username: string
  readonly password: string
  readonly method: string
  /** The Request-URI of the request being retried. */
  readonly uri: string
  /** Nonce count for this nonce, from 1. */
  readonly nc?: number
  /** Client nonce; random when not given (tests pass one). */
  readonly cnonce?: string
}

/** The Authorization / Proxy-Authorization value answering `challenge`. */
export function authorize(challenge: DigestChallenge, credentials: DigestCredentials): string {
  const ha1 = digestHa1(challenge.algorithm, credentials.username, challenge.realm, credentials.password)
  const nc = (credentials.nc ?? 1).toString(16).padStart(8, '0')
  const cnonce = credentials.cnonce ?? randomBytes(12).toString('hex')
  const qop = challenge.qopAuth ? { nc, cnonce } : undefined
  const response = digestResponse({
    algorithm: challenge.algorithm,
    ha1,
    method: credentials.method,
    uri: credentials.uri,
    nonce: challenge.nonce,
    qop,
  })
  const params: [string, string][] = [
    ['username', credentials.username],
    ['realm', challenge.realm],
    ['nonce', challenge.nonce],
    ['uri', credentials.uri],
    ['response', response],
    ['algorithm', challenge.algorithm],
  ]
  if (qop !== undefined) params.push(['qop', 'auth'], ['nc', nc], ['cnonce', cnonce])
  if (challenge.opaque !== undefined) params.push(['opaque', challenge.opaque])
  return formatAuthHeader('Digest', params, 'credentials')
}

// ---- Server side: challenge and check an inbound request ----

/** Server-side settings: a secret for nonces (random per process is fine), a realm, an injected clock. */
export interface DigestServerOptions {
  readonly realm: string
  readonly secret: Buffer
  /** How long a nonce is accepted; after that the client is told `stale=true` and retries without asking a user. */
  readonly nonceTtlMs?: number
  readonly now?: () => number
  /** Nonces whose counts are remembered (replays refused) at most. */
  readonly maxTrackedNonces?: number
}

/** What the server knows of a user: the password, or HA1 per algorithm (stored instead of the password). */
export type DigestSecret = { readonly password: string } | { readonly ha1: Partial<Record<DigestAlgorithm, string>> }

/** The request a credential answers: its method and Request-URI, and the source address its nonce was sent to. */
export interface DigestRequest {
  readonly method: string
  readonly uri: string
  /** The packet's source address; a nonce is only good from the address it was issued to. */
  readonly source?: string | undefined
}

/**
 * The outcome of a check. `bad_response` and `unknown_user` are the only ones that tested a password: they
 * answered a nonce this server issued to that very source. `stale_nonce` and `replayed` had the right password
 * on a nonce that can no longer be used, and are answered with a fresh challenge (`stale=true`).
 */
export type DigestCheck =
  | { readonly ok: true; readonly username: string }
  | {
      readonly ok: false
      readonly reason: 'missing' | 'malformed' | 'realm' | 'algorithm' | 'uri' | 'bad_nonce' | 'unknown_user' | 'bad_response'
      readonly stale?: false
    }
  | { readonly ok: false; readonly reason: 'stale_nonce' | 'replayed'; readonly stale: true }

/** Why a check failed. */
export type DigestFailure = Exclude<DigestCheck, { ok: true }>['reason']

/**
 * Nonces (an issue time and an HMAC of it and of the address it is sent to), challenges, and checks of
 * Authorization headers, with the count of each nonce tracked so an answer is good once.
 */
export class DigestServer {
  readonly #realm: string
  readonly #secret: Buffer
  readonly #ttl: number
  readonly #now: () => number
  readonly #counts: NonceCounts

  constructor(options: DigestServerOptions) {
    this.#realm = options.realm
    this.#secret = options.secret
    this.#ttl = options.nonceTtlMs ?? 300_000
    this.#now = options.now ?? Date.now
    this.#counts = new NonceCounts(options.maxTrackedNonces)
  }

  /**
   * A fresh nonce for `source`: issue time and an HMAC of it and the source, so any replica with the same secret
   * can check it, and an answer computed on it is refused from any other address.
   */
  nonce(source = ''): string {
    const issued = this.#now().toString(36)
    return `${issued}.${this.#mac(issued, source)}`
  }

  /** The WWW-Authenticate (or Proxy-Authenticate) values to send to `source`: one per algorithm, strongest first. */
  challenges(options: { stale?: boolean; source?: string | undefined } = {}): string[] {
    const nonce = this.nonce(options.source)
    return DIGEST_ALGORITHMS.map((algorithm) => {
      const params: [string, string][] = [
        ['realm', this.#realm],
        ['nonce', nonce],
        ['algorithm', algorithm],
        ['qop', 'auth'],
      ]
      if (options.stale === true) params.push(['stale', 'true'])
      return formatAuthHeader('Digest', params, 'challenge')
    })
  }

  /**
   * Checks an Authorization value for a request. `lookup` gives the user's secret or `undefined`. Compares in
   * constant time; an unknown user and a wrong password look the same from outside. A right answer is accepted
   * once per nonce count: the same or a lower `nc` again (or a second answer without qop) is `replayed`.
   */
  check(value: string | undefined, request: DigestRequest, lookup: (username: string) => DigestSecret | undefined): DigestCheck {
    if (value === undefined) return { ok: false, reason: 'missing' }
    const header: AuthHeader | null = parseAuthHeader(value)
    if (header === null || header.scheme.toLowerCase() !== 'digest') return { ok: false, reason: 'malformed' }
    const p = header.params
    const [username, nonce, uri, response] = [p.get('username'), p.get('nonce'), p.get('uri'), p.get('response')]
    if (username === undefined || nonce === undefined || uri === undefined || response === undefined)
      return { ok: false, reason: 'malformed' }
    if (p.get('realm') !== this.#realm) return { ok: false, reason: 'realm' }
    const algorithm = algorithmOf(p.get('algorithm'))
    if (algorithm === null) return { ok: false, reason: 'algorithm' }
    if (uri !== request.uri) return { ok: false, reason: 'uri' }
    const qop = p.get('qop')
    let qopInput: DigestInput['qop']
    if (qop !== undefined) {
      const [nc, cnonce] = [p.get('nc'), p.get('cnonce')]
      if (qop.toLowerCase() !== 'auth' || nc === undefined || !/^[0-9a-fA-F]{8}$/.test(nc) || cnonce === undefined)
        return { ok: false, reason: 'malformed' }
      qopInput = { nc, cnonce }
    }
    // A nonce of another server, or one sent to another address, tests no password: nothing is computed.
    const issued = this.#issued(nonce, request.source ?? '')
    if (issued === undefined) return { ok: false, reason: 'bad_nonce' }
    const secret = lookup(username)
    const ha1 =
      secret === undefined
        ? undefined
        : 'password' in secret
          ? digestHa1(algorithm, username, this.#realm, secret.password)
          : secret.ha1[algorithm]
    // Compute a digest even for an unknown user, so timing does not tell which usernames exist.
    const expected = digestResponse({ algorithm, ha1: ha1 ?? '0', method: request.method, uri, nonce, qop: qopInput })
    const match = expected.length === response.length && timingSafeEqual(Buffer.from(expected), Buffer.from(response.toLowerCase()))
    if (ha1 === undefined) return { ok: false, reason: 'unknown_user' }
    if (!match) return { ok: false, reason: 'bad_response' }
    // RFC 7616 section 3.3: a stale nonce with a right digest means the client knows the password: retry quietly.
    const now = this.#now()
    if (now - issued > this.#ttl) return { ok: false, reason: 'stale_nonce', stale: true }
    // Without qop there is no count: such a nonce is good for one request.
    const count = qopInput === undefined ? 1 : Number.parseInt(qopInput.nc, 16)
    if (!this.#counts.use(nonce, issued, count, now - this.#ttl)) return { ok: false, reason: 'replayed', stale: true }
    return { ok: true, username }
  }

  #mac(issued: string, source: string): string {
    return createHmac('sha256', this.#secret).update(`${issued}:${this.#realm}:${source}`).digest('base64url').slice(0, 22)
  }

  /** The nonce's issue time (ms) when this server issued it to `source`; undefined otherwise. */
  #issued(nonce: string, source: string): number | undefined {
    const dot = nonce.indexOf('.')
    if (dot <= 0) return undefined
    const issued = nonce.slice(0, dot)
    const mac = Buffer.from(nonce.slice(dot + 1))
    const want = Buffer.from(this.#mac(issued, source))
    if (mac.length !== want.length || !timingSafeEqual(mac, want)) return undefined
    const at = Number.parseInt(issued, 36)
    if (!Number.isFinite(at) || at > this.#now()) return undefined
    return at
  }
}
