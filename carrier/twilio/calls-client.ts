/**
 * Twilio-compatible Calls REST client: create a call, hang it up.
 */
import {
  CarrierApiError,
  type CarrierCall,
  type CarrierCallOptions,
  type CarrierCallsClient,
  type CarrierCreateCallRequest,
  type CarrierCredentials,
  type CarrierStatusCallbackEvent,
} from '../carrier.js'
import { machineDetectionFields } from './machine-detection.js'

/** Tuning for `TwilioCallsClient`; every field has a default. */
export interface TwilioCallsClientOptions {
  /** Injected fetch (tests, proxies). Defaults to the global fetch. */
  readonly fetch?: typeof fetch
  /** Retries after the first attempt for retryable failures. Default 3. */
  readonly maxRetries?: number
  /** First backoff delay; doubles per retry, with jitter. Default 250 ms. */
  readonly baseDelayMs?: number
  /** Cap on one backoff delay (also caps Retry-After). Default 5000 ms. */
  readonly maxDelayMs?: number
  /** Timeout of one HTTP attempt. Default 10000 ms. */
  readonly requestTimeoutMs?: number
}

/** REST base URL used when an organization stored none. */
export const DEFAULT_CARRIER_API_BASE_URL = 'https://api.twilio.com'

/** Events subscribed when the caller does not choose. */
export const DEFAULT_STATUS_CALLBACK_EVENTS: readonly CarrierStatusCallbackEvent[] = ['initiated', 'ringing', 'answered', 'completed']

/** Twilio's "too many requests" error number. */
export const RATE_LIMIT_CODE = 20429

// Failures where the request certainly never reached the carrier, so even a non-idempotent POST
// (creating a call) can be sent again without risking two calls.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH'])

interface Attempt {
  readonly path: string
  readonly form: URLSearchParams
  /** Safe to resend after an ambiguous network failure or timeout. */
  readonly idempotent: boolean
  readonly signal: AbortSignal | undefined
}

/** `CarrierCallsClient` for a Twilio-compatible REST API. */
export class TwilioCallsClient implements CarrierCallsClient {
  readonly #credentials: CarrierCredentials
  readonly #fetch: typeof fetch
  readonly #maxRetries: number
  readonly #baseDelayMs: number
  readonly #maxDelayMs: number
  readonly #timeoutMs: number

  constructor(credentials: CarrierCredentials, options: TwilioCallsClientOptions = {}) {
    this.#credentials = credentials
    this.#fetch = options.fetch ?? fetch
    this.#maxRetries = options.maxRetries ?? 3
    this.#baseDelayMs = options.baseDelayMs ?? 250
    this.#maxDelayMs = options.maxDelayMs ?? 5000
    this.#timeoutMs = options.requestTimeoutMs ?? 10_000
  }

  async createCall(request: CarrierCreateCallRequest): Promise<CarrierCall> {
    const form = new URLSearchParams()
    form.append('To', request.to)
    form.append('From', request.from)
    if (request.twiml !== undefined) form.append('Twiml', request.twiml)
    else {
      form.append('Url', request.url ?? '')
      form.append('Method', 'POST')
    }
    if (request.statusCallback !== undefined) {
      form.append('StatusCallback', request.statusCallback)
      form.append('StatusCallbackMethod', 'POST')
      for (const event of request.statusCallbackEvents ?? DEFAULT_STATUS_CALLBACK_EVENTS) {
        form.append('StatusCallbackEvent', event)
      }
    }
    if (request.timeoutSec !== undefined) form.append('Timeout', String(Math.round(request.timeoutSec)))
    if (request.machineDetection !== undefined) {
      for (const [name, value] of machineDetectionFields(request.machineDetection.callbackUrl)) form.append(name, value)
    }
    return this.#send({ path: 'Calls.json', form, idempotent: false, signal: request.signal })
  }

  async hangup(sid: string, options: CarrierCallOptions = {}): Promise<CarrierCall> {
    const form = new URLSearchParams({ Status: 'completed' })
    return this.#send({ path: `Calls/${encodeURIComponent(sid)}.json`, form, idempotent: true, signal: options.signal })
  }

  async updateCall(sid: string, markup: string, options: CarrierCallOptions = {}): Promise<CarrierCall> {
    const form = new URLSearchParams({ Twiml: markup })
    // Not resent after an ambiguous failure: the first may have moved the call already (a second would redial).
    return this.#send({ path: `Calls/${encodeURIComponent(sid)}.json`, form, idempotent: false, signal: options.signal })
  }

  async #send(attempt: Attempt): Promise<CarrierCall> {
    const { accountSid, authToken } = this.#credentials
    const base = (this.#credentials.apiBaseUrl ?? DEFAULT_CARRIER_API_BASE_URL).replace(/\/+$/, '')
    const url = `${base}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/${attempt.path}`
    const headers = {
      authorization: `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    }
    const body = attempt.form.toString()
    for (let tries = 1; ; tries++) {
      attempt.signal?.throwIfAborted()
      const outcome = await this.#once(url, headers, body, attempt, tries)
      if (outcome.kind === 'done') return outcome.call
      if (tries > this.#maxRetries || !outcome.retryable) throw outcome.error
      await sleep(this.#backoff(tries, outcome.retryAfterMs), attempt.signal)
    }
  }

  async #once(
    url: string,
    headers: Record<string, string>,
    body: string,
    attempt: Attempt,
    tries: number,
  ): Promise<
    { kind: 'done'; call: CarrierCall } | { kind: 'failed'; error: CarrierApiError; retryable: boolean; retryAfterMs?: number | undefined }
  > {
    const timeout = AbortSignal.timeout(this.#timeoutMs)
    const signal = attempt.signal ? AbortSignal.any([attempt.signal, timeout]) : timeout
    let response: Response
    let text: string
    try {
      response = await this.#fetch(url, { method: 'POST', headers, body, signal })
      text = await response.text()
    } catch (err) {
      if (attempt.signal?.aborted) throw attempt.signal.reason
      if (timeout.aborted) {
        const error = new CarrierApiError({
          code: 'carrier_timeout',
          status: 0,
          message: `carrier API did not answer within ${this.#timeoutMs} ms`,
          attempts: tries,
        })
        return { kind: 'failed', error, retryable: attempt.idempotent }
      }
      const code = networkCode(err)
      const error = new CarrierApiError({
        code: 'carrier_unavailable',
        status: 0,
        message: `carrier API unreachable${code ? ` (${code})` : ''}`,
        attempts: tries,
        cause: err,
      })
      return { kind: 'failed', error, retryable: attempt.idempotent || (code !== undefined && NOT_SENT_CODES.has(code)) }
    }
    const json = parseJson(text)
    if (response.ok) {
      const sid = json?.sid
      if (typeof sid !== 'string' || sid === '') {
        const error = new CarrierApiError({
          code: 'carrier_bad_response',
          status: response.status,
          message: 'carrier API reply has no call sid',
          attempts: tries,
        })
        return { kind: 'failed', error, retryable: false }
      }
      return { kind: 'done', call: { sid, status: typeof json?.status === 'string' ? json.status : 'queued' } }
    }
    const carrierCode = typeof json?.code === 'number' ? json.code : undefined
    const rateLimited = response.status === 429 || carrierCode === RATE_LIMIT_CODE
    const error = new CarrierApiError({
      code: rateLimited
        ? 'carrier_rate_limited'
        : response.status === 401 || response.status === 403
          ? 'carrier_auth_failed'
          : response.status >= 500
            ? 'carrier_unavailable'
            : 'carrier_rejected',
      status: response.status,
      message: this.#redact(typeof json?.message === 'string' ? json.message : `carrier API answered ${response.status}`),
      carrierCode,
      moreInfo: typeof json?.more_info === 'string' ? json.more_info : undefined,
      attempts: tries,
    })
    // A 5xx may have created the call already; only idempotent requests are resent then.
    const retryable = rateLimited || (response.status >= 500 && attempt.idempotent)
    return { kind: 'failed', error, retryable, retryAfterMs: retryAfter(response.headers.get('retry-after')) }
  }

  #backoff(tries: number, retryAfterMs: number | undefined): number {
    if (retryAfterMs !== undefined) return Math.min(retryAfterMs, this.#maxDelayMs)
    const exp = Math.min(this.#baseDelayMs * 2 ** (tries - 1), this.#maxDelayMs)
    return exp / 2 + Math.random() * (exp / 2)
  }

  #redact(message: string): string {
    const token = this.#credentials.authToken
    return token === '' ? message : message.split(token).join('[redacted]')
  }
}

function parseJson(text: string): Record<string, unknown> | undefined {
  if (text === '') return undefined
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined
  } catch {
    // Not JSON (an HTML error page from a proxy): the status alone describes the failure.
    return undefined
  }
}

function networkCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string') return code
    e = (e as { cause?: unknown }).cause
  }
  return undefined
}

function retryAfter(header: string | null): number | undefined {
  if (header === null) return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(header)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
