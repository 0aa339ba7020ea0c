/**
 * Telling "the database is not there right now" (a restart, a network cut, a full connection table) from any
 * other database error: the first is worth a retry and a 503, the second is a bug or bad data.
 */
import { setTimeout as sleep } from 'node:timers/promises'

/** Node's socket errors seen while a server restarts or is unreachable. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])

/**
 * SQLSTATEs of an unavailable server: class 08 (connection exception), 57P01-57P03 (admin or crash shutdown,
 * cannot connect now: the server is starting or stopping), 53300 (too many connections).
 */
function unavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300'
}

/** What node-postgres says when a connection goes away under a query or cannot be made in time. */
const POOL_MESSAGES = [/^Connection terminated/, /timeout exceeded when trying to connect/, /Client has encountered a connection error/]

/** True when `e` (or its cause) says the database server cannot be reached at the moment. */
export function isDatabaseUnavailable(e: unknown): boolean {
  for (let err = e, depth = 0; err instanceof Error && depth < 4; err = err.cause, depth++) {
    const code = (err as { code?: unknown }).code
    if (typeof code === 'string' && (SOCKET_CODES.has(code) || unavailableSqlState(code))) return true
    if (POOL_MESSAGES.some((m) => m.test(err instanceof Error ? err.message : ''))) return true
  }
  return false
}

/** Waits between tries of `retryWhileUnavailable`, the last one repeated. */
export const RETRY_BACKOFF_MS = [100, 250, 500, 1000, 2000, 5000] as const

/** How `retryWhileUnavailable` retries. */
export interface RetryOptions {
  /** How long after the first failure worth retrying it goes on trying. */
  forMs: number
  /** Failures worth another try; default: the database is unavailable. */
  isTransient?: (e: unknown) => boolean
  /** Waits between tries, the last one repeated; default RETRY_BACKOFF_MS. */
  backoffMs?: readonly number[]
  /** Aborted: no more waiting; the try under way, or the next one, is the last. */
  signal?: AbortSignal
  /** Called once, at the first failure that will be retried. */
  onRetry?: (e: unknown) => void
}

/**
 * Runs `work`, trying again while its failure is transient (by default: the database is unavailable) for up
 * to `forMs` after the first one; any other failure, or the last one, is thrown. For writes that must not be
 * lost to a restart and are safe to repeat.
 */
export async function retryWhileUnavailable<T>(work: () => Promise<T>, options: RetryOptions): Promise<T> {
  const { forMs, isTransient = isDatabaseUnavailable, backoffMs = RETRY_BACKOFF_MS, signal, onRetry } = options
  let deadline: number | undefined
  for (let attempt = 0; ; attempt++) {
    try {
      return await work()
    } catch (e) {
      if (!isTransient(e) || signal?.aborted === true) throw e
      if (deadline === undefined) {
        deadline = Date.now() + forMs
        onRetry?.(e)
      } else if (Date.now() >= deadline) {
        throw e
      }
      try {
        await sleep(backoffMs[Math.min(attempt, backoffMs.length - 1)] ?? 1000, undefined, { signal })
      } catch {
        // Aborted while waiting: one more try, then the last failure is thrown.
      }
    }
  }
}
