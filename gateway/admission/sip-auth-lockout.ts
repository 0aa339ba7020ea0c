/**
 * The lockout of SIP password guessers: failed digest answers are counted per source and trunk in the
 * store (every replica draws from one budget); past the budget the source is refused for a block that doubles
 * with each new one, up to a cap; the right password resets that trunk's count. A block is also kept in a small
 * in-process table, so while it runs the source's INVITEs cost a map look-up: no store round trip, no digest,
 * no log line.
 */
import { isIP } from 'node:net'
import type { Kysely } from 'kysely'
import { unmappedAddress } from '../../core/cidr.js'
import type { Log } from '../../core/log.js'
import type { Database } from '../store/schema.js'
import {
  type AuthFailureState,
  purgeSipAuthFailures,
  recordSipAuthFailure,
  resetSipAuthFailures,
  sipAuthBlockedUntil,
} from '../store/sip-auth-failures.js'

/** The budget and the blocks. */
export interface LockoutPolicy {
  /** Failures allowed in `windowMs` (the credit refills at budget per window); the one that uses the last blocks. */
  readonly budget: number
  readonly windowMs: number
  /** The first block; each further one lasts twice as long as the one before. */
  readonly firstBlockMs: number
  readonly maxBlockMs: number
}

/** 5 failures in a minute; blocks of 1 minute, doubling, at most 1 hour. */
export const DEFAULT_LOCKOUT_POLICY: LockoutPolicy = { budget: 5, windowMs: 60_000, firstBlockMs: 60_000, maxBlockMs: 3_600_000 }

/** How long a replica trusts what it knows of a block before it reads the store again. */
export const BLOCK_CACHE_MS = 60_000
/** Blocked sources one replica remembers at most (each an address and a time). */
export const MAX_CACHED_BLOCKS = 10_000
/** Rows with no failure for this long are purged (and their strikes with them). */
export const FAILURE_MEMORY_MS = 24 * 3_600_000
/** How often one replica purges. */
const PURGE_EVERY_MS = 10 * 60_000

/**
 * The failures that tested a password: a digest answer on a nonce this server issued to that very source. The
 * others (a malformed header, another realm or URI, a nonce of someone else) test nothing and could be sent
 * with a forged UDP source, so they are refused without being counted: a stranger cannot lock a trunk's PBX out
 * by sending garbage in its name.
 */
const COUNTED: ReadonlySet<string> = new Set(['bad_response', 'unknown_user'])

/** The state after one more failure at `now` (pure: the store runs it with the row locked). */
export function afterFailure(previous: AuthFailureState | undefined, now: number, policy: LockoutPolicy): AuthFailureState {
  const strikes = previous?.strikes ?? 0
  const elapsed = previous === undefined ? 0 : Math.max(0, now - previous.countedAt)
  const refilled =
    previous === undefined ? policy.budget : Math.min(policy.budget, previous.credit + (elapsed * policy.budget) / policy.windowMs)
  const credit = refilled - 1
  if (credit >= 1) return { credit, countedAt: now, strikes, blockedUntil: previous?.blockedUntil ?? null }
  const blockMs = Math.min(policy.maxBlockMs, policy.firstBlockMs * 2 ** Math.min(strikes, 30))
  return { credit: policy.budget, countedAt: now, strikes: strikes + 1, blockedUntil: now + blockMs }
}

/**
 * The source as counted: an IPv4 address (an IPv4-mapped IPv6 one as the IPv4 it is), or the /64 of an IPv6
 * address, since one subscriber usually holds a whole /64 and could otherwise take a fresh address per guess.
 */
export function sourceKey(address: string): string {
  const ip = unmappedAddress(address.replace(/%[^%]*$/, ''))
  if (isIP(ip) !== 6) return ip
  const [head = '', tail = ''] = ip.toLowerCase().split('::')
  const left = head === '' ? [] : head.split(':')
  const right = tail === '' ? [] : tail.split(':')
  const groups = ip.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`
}

/** What the lockout counts; the wiring makes Prometheus metrics of it. */
export interface SipAuthMetrics {
  /** A digest answer was refused, by the checker's reason (`bad_response`, `unknown_user`, `replayed`, ...). */
  failed(reason: string): void
  /** A source was blocked (counted once, by the replica that blocked it). */
  blocked(): void
}

/** What the lockout needs. */
export interface SipAuthLockoutDeps {
  readonly db: Kysely<Database>
  readonly log: Log
  readonly metrics?: SipAuthMetrics | undefined
  readonly policy?: LockoutPolicy
  /** The clock (ms); tests inject one. */
  readonly now?: () => number
}

/** Counts failed digest answers and refuses blocked sources. */
export class SipAuthLockout {
  readonly #deps: SipAuthLockoutDeps
  readonly #policy: LockoutPolicy
  readonly #now: () => number
  /** Source key -> { until: the block's end, checkedAt: when the store said so }. */
  readonly #blocks = new Map<string, { until: number; checkedAt: number }>()
  #purgedAt: number

  constructor(deps: SipAuthLockoutDeps) {
    this.#deps = deps
    this.#policy = deps.policy ?? DEFAULT_LOCKOUT_POLICY
    this.#now = deps.now ?? Date.now
    this.#purgedAt = this.#now()
  }

  /** True when this replica knows `address` is blocked (no store round trip: the per-packet check). */
  isBlocked(address: string): boolean {
    const key = sourceKey(address)
    const known = this.#blocks.get(key)
    if (known === undefined) return false
    const now = this.#now()
    if (known.until > now && now - known.checkedAt < BLOCK_CACHE_MS) return true
    this.#blocks.delete(key)
    return false
  }

  /** True when `address` is blocked, here or by any replica (the store is read unless this replica knows). */
  async blocked(address: string): Promise<boolean> {
    if (this.isBlocked(address)) return true
    const key = sourceKey(address)
    const now = this.#now()
    const until = await sipAuthBlockedUntil(this.#deps.db, key, now)
    if (until === undefined) return false
    this.#remember(key, until, now)
    return true
  }

  /**
   * A refused digest answer from `address` for `trunkId` (undefined: the credentials named no trunk's user).
   * Counted when it tested a password; true when the source is blocked from now on. The replica that blocks logs
   * it, once: the trunk and the source, never what was sent.
   */
  async failed(address: string, trunkId: string | undefined, reason: string): Promise<boolean> {
    this.#deps.metrics?.failed(reason)
    if (!COUNTED.has(reason)) return false
    const key = { source: sourceKey(address), trunkId: trunkId ?? '' }
    const now = this.#now()
    // The store may run the step twice (an insert that lost a race, then the update): the last run is stored.
    let blocks = false
    const state = await recordSipAuthFailure(this.#deps.db, key, (previous) => {
      const next = afterFailure(previous, now, this.#policy)
      blocks = next.strikes > (previous?.strikes ?? 0)
      return next
    })
    this.#purgeNowAndThen(now)
    if (!blocks || state.blockedUntil === null) return false
    this.#remember(key.source, state.blockedUntil, now)
    this.#deps.metrics?.blocked()
    this.#deps.log.warn(
      {
        source: key.source,
        trunk_id: key.trunkId === '' ? null : key.trunkId,
        blocked_s: Math.round((state.blockedUntil - now) / 1000),
        blocks: state.strikes,
      },
      'SIP source blocked after failed digest answers',
    )
    return true
  }

  /** The right password from `address` for `trunkId`: that trunk's count and strikes start again. */
  async succeeded(address: string, trunkId: string): Promise<void> {
    await resetSipAuthFailures(this.#deps.db, { source: sourceKey(address), trunkId })
  }

  #remember(key: string, until: number, now: number): void {
    this.#blocks.delete(key)
    if (this.#blocks.size >= MAX_CACHED_BLOCKS) {
      const oldest = this.#blocks.keys().next()
      if (oldest.done !== true) this.#blocks.delete(oldest.value)
    }
    this.#blocks.set(key, { until, checkedAt: now })
  }

  #purgeNowAndThen(now: number): void {
    if (now - this.#purgedAt < PURGE_EVERY_MS) return
    this.#purgedAt = now
    purgeSipAuthFailures(this.#deps.db, now - FAILURE_MEMORY_MS).catch((e: unknown) =>
      this.#deps.log.warn({ err: e }, 'purging old SIP digest failures failed'),
    )
  }
}
