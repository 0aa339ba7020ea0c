import type { Log } from '../../core/log.js'
import type { WebhookOutcome } from '../../core/metrics.js'
import {
  connectionFailureWords,
  signedHeaders,
  webhookUrlProblem,
  type UrlPolicy,
  globalFetch,
  type FetchLike,
} from '../../pipeline/index.js'
import { egressRefusalOf } from './egress-fetch.js'

/** Where one session's lifecycle webhooks go and how they are signed. */
export interface WebhookTarget {
  url: string
  secret: string
  customHeaders?: Record<string, string> | undefined
}

/** Delivery tuning; the defaults suit production, tests shorten them. */
export interface DeliveryOptions {
  /** Per-attempt timeout. */
  timeoutMs?: number
  /** Total attempts per event, the first included. */
  maxAttempts?: number
  /** Backoff before retry n (ms); the last value repeats. Jitter of up to 25% is added. */
  backoffMs?: number[]
  /** Events waiting beyond this are dropped (oldest first) and logged. */
  maxPending?: number
  /** Which target URLs are accepted (http to loopback, the gateway's own tunnel); default: https only. */
  policy?: UrlPolicy
  /** The fetch deliveries go through (the gateway's egress policy); default: the global fetch. */
  fetch?: FetchLike | undefined
  /**
   * Whether a target URL reached a private address (the egress policy knows): a failed connection there is
   * recorded as `connection failed` whatever happened, so deliveries cannot port-scan. Default: none is.
   */
  privateTarget?: ((url: string) => boolean) | undefined
  /** Told each event's final result (after its retries), e.g. for metrics. Must not throw. */
  onResult?: ((result: DeliveryResult) => void) | undefined
  /** Keeps a record of each event and its attempts (the console lists them and sends failed ones again). */
  journal?: DeliveryJournal | undefined
}

/**
 * Where deliveries are recorded. Calls are awaited in delivery order; a journal that fails must log and resolve,
 * never reject: a customer's broken endpoint or a slow database can never break a call.
 */
export interface DeliveryJournal {
  /** An event is about to be delivered; returns its record's id (undefined: not recorded). */
  begin(type: string, body: string, url: string): Promise<string | undefined>
  /** After each attempt; `final` on the last one (delivered, given up, or closed). */
  attempted(id: string, result: DeliveryResult, final: boolean): Promise<void>
}

/** Outcome of one event's delivery, for logs and tests. */
export interface DeliveryResult {
  type: string
  ok: boolean
  attempts: number
  status?: number
  /** Why no status came, in fixed words (`timeout`, `connection refused`, ...); never what the target said. */
  error?: string
  /** The egress policy refused the address: final, not retried. */
  refused?: boolean
}

/** A result as metrics count it: delivered, given up (`failed`), or dropped by the queue's close (`cancelled`). */
export function deliveryOutcome(result: DeliveryResult): WebhookOutcome {
  return result.ok ? 'delivered' : result.error === 'closed' ? 'cancelled' : 'failed'
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}

/**
 * One session's lifecycle webhooks: delivered one at a time in the order they were sent, each with a timeout
 * and bounded retries (network errors, 408, 429, 5xx) with backoff. Failures are logged and never thrown:
 * a customer's broken endpoint can never break a call. Redirects are not followed (the signed body would go
 * somewhere else).
 */
export class WebhookQueue {
  readonly #pending: { type: string; body: string }[] = []
  #running: Promise<void> | undefined
  readonly #abort = new AbortController()
  readonly #opts: Required<Omit<DeliveryOptions, 'onResult' | 'journal' | 'fetch' | 'privateTarget'>> &
    Pick<DeliveryOptions, 'fetch' | 'privateTarget'>
  readonly #onResult: (result: DeliveryResult) => void
  readonly #journal: DeliveryJournal | undefined
  /** Results in delivery order (kept small: one per event). */
  readonly results: DeliveryResult[] = []

  readonly #target: WebhookTarget
  readonly #log: Log
  constructor(target: WebhookTarget, log: Log, options: DeliveryOptions = {}) {
    this.#target = target
    this.#log = log
    this.#opts = {
      timeoutMs: options.timeoutMs ?? 10_000,
      maxAttempts: options.maxAttempts ?? 4,
      backoffMs: options.backoffMs ?? [500, 2_000, 5_000],
      maxPending: options.maxPending ?? 32,
      policy: options.policy ?? {},
      fetch: options.fetch,
      privateTarget: options.privateTarget,
    }
    this.#onResult = options.onResult ?? (() => undefined)
    this.#journal = options.journal
  }

  /** Queues an event; returns at once. */
  send(payload: { type: string } & Record<string, unknown>): void {
    if (this.#abort.signal.aborted) return
    const problem = webhookUrlProblem(this.#target.url, this.#opts.policy)
    if (problem !== undefined) {
      this.#log.warn({ type: payload.type, problem }, 'session webhook not sent: url refused')
      this.#record({ type: payload.type, ok: false, attempts: 0, error: `url ${problem}` })
      return
    }
    if (this.#pending.length >= this.#opts.maxPending) {
      const dropped = this.#pending.shift()
      this.#log.warn({ type: dropped?.type }, 'session webhook dropped: too many pending')
    }
    this.#pending.push({ type: payload.type, body: JSON.stringify(payload) })
    this.#running ??= this.#run().finally(() => {
      this.#running = undefined
    })
  }

  /** Resolves when everything queued so far is delivered or given up, or after `timeoutMs`. */
  async drain(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (this.#running !== undefined && Date.now() < deadline) {
      // The wait is cancelled as soon as delivery finishes, so no timer outlives the drain.
      const waiting = new AbortController()
      await Promise.race([this.#running, sleep(Math.max(1, deadline - Date.now()), AbortSignal.any([this.#abort.signal, waiting.signal]))])
      waiting.abort()
    }
  }

  /** Stops retrying and drops what is pending. */
  close(): void {
    this.#pending.length = 0
    this.#abort.abort()
  }

  async #run(): Promise<void> {
    for (let item = this.#pending.shift(); item !== undefined; item = this.#pending.shift()) {
      const journalId = await this.#journal?.begin(item.type, item.body, this.#target.url)
      const result = await this.#deliver(item.type, item.body, journalId)
      this.#record(result)
      if (result.ok) this.#log.debug({ ...result }, 'session webhook delivered')
      else this.#log.warn({ ...result }, 'session webhook failed')
    }
  }

  #record(result: DeliveryResult): void {
    this.results.push(result)
    this.#onResult(result)
  }

  async #deliver(type: string, body: string, journalId: string | undefined): Promise<DeliveryResult> {
    let last: DeliveryResult = { type, ok: false, attempts: 0 }
    for (let attempt = 1; attempt <= this.#opts.maxAttempts; attempt++) {
      if (this.#abort.signal.aborted) {
        const closed = { ...last, error: 'closed' }
        if (journalId !== undefined) await this.#journal?.attempted(journalId, closed, true)
        return closed
      }
      last = await deliverOnce(this.#target, type, body, attempt, {
        timeoutMs: this.#opts.timeoutMs,
        signal: this.#abort.signal,
        fetch: this.#opts.fetch,
        privateTarget: this.#opts.privateTarget,
      })
      const again = !last.ok && !last.refused && retryable(last.status)
      const final = !again || attempt === this.#opts.maxAttempts
      if (journalId !== undefined) await this.#journal?.attempted(journalId, last, final)
      if (!again) return last
      if (attempt < this.#opts.maxAttempts) {
        const base = this.#opts.backoffMs[Math.min(attempt - 1, this.#opts.backoffMs.length - 1)] ?? 1_000
        await sleep(base + Math.random() * base * 0.25, this.#abort.signal)
      }
    }
    return last
  }
}

/**
 * One signed POST of a webhook body: re-signed on every attempt so a retried (or resent) request is not rejected
 * as too old; redirects are not followed. Never throws: failures are results.
 */
export async function deliverOnce(
  target: WebhookTarget,
  type: string,
  body: string,
  attempt: number,
  opts: {
    timeoutMs: number
    signal?: AbortSignal
    fetch?: FetchLike | undefined
    privateTarget?: ((url: string) => boolean) | undefined
  },
): Promise<DeliveryResult> {
  const headers = signedHeaders(target.secret, body, target.customHeaders)
  const timeout = AbortSignal.timeout(opts.timeoutMs)
  const signal = opts.signal === undefined ? timeout : AbortSignal.any([opts.signal, timeout])
  try {
    const res = await (opts.fetch ?? globalFetch)(target.url, { method: 'POST', headers, body, signal, redirect: 'manual' })
    // The reply body is not used; read it so the connection can be reused.
    await res.arrayBuffer().catch(() => undefined)
    return { type, ok: res.status >= 200 && res.status < 300, attempts: attempt, status: res.status }
  } catch (e) {
    // Fixed words, stored where the organization reads them: never an address, an error code or a message.
    if (egressRefusalOf(e) !== undefined)
      return { type, ok: false, attempts: attempt, error: 'refused by the egress policy', refused: true }
    // The attempt's own deadline; any other failure reaching a private address is one word (no port scanning).
    if ((e as Error).name === 'TimeoutError') return { type, ok: false, attempts: attempt, error: 'timeout' }
    const error = opts.privateTarget?.(target.url) === true ? 'connection failed' : connectionFailureWords(e)
    return { type, ok: false, attempts: attempt, error }
  }
}

/** Network errors (no status), timeouts, 408, 429 and 5xx are worth retrying; other answers are final. */
function retryable(status: number | undefined): boolean {
  return status === undefined || status === 408 || status === 429 || status >= 500
}
