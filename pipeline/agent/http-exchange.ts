import { type ConnectionFailureWords, connectionFailureWords } from './connection-failure.js'

/** The fetch function agent steps use; injectable so tests and embedders can supply their own. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>

/** The global fetch, looked up at each call (so a fetch installed later, e.g. by a test, is the one used). */
export const globalFetch: FetchLike = (input, init) => fetch(input, init)

/** Why an exchange stopped before its reply was read to the end: the stable `code` of an {@link ExchangeError}. */
export type ExchangeErrorCode =
  /** The caller's signal aborted (barge-in): stop quietly. */
  | 'aborted'
  /** No response byte within the first-byte limit. */
  | 'first_byte_timeout'
  /** The whole reply took longer than the total limit. */
  | 'total_timeout'
  /** The reply exceeded the byte limit. */
  | 'too_large'
  /** The request could not be sent (DNS, refused connection, TLS). */
  | 'unreachable'
  /** The connection broke while the body was being read. */
  | 'cut_off'

/** An exchange failure with its stable code; the message never contains the URL (it may carry a token). */
export class ExchangeError extends Error {
  override readonly name = 'ExchangeError'
  readonly code: ExchangeErrorCode
  /** What an `unreachable` or `cut_off` failure's connection did, in fixed words (never its code or message). */
  readonly words: ConnectionFailureWords | undefined

  constructor(code: ExchangeErrorCode, message: string, words?: ConnectionFailureWords) {
    super(message)
    this.code = code
    this.words = words
  }
}

/** Why a closed exchange's request was aborted; nobody awaits it by then. Its stack is formatted once, here. */
const CLOSED = new ExchangeError('aborted', 'the exchange was closed')
void CLOSED.stack

/** Limits of one exchange. */
export interface ExchangeLimits {
  /** Milliseconds from sending until the first response byte. */
  firstByteMs: number
  /** Milliseconds from sending until the reply is read to its end. */
  totalMs: number
  /** Most body bytes read. */
  maxBytes: number
}

/**
 * One HTTP request with a first-byte deadline, a total deadline and a body size bound, cancelled by the caller's
 * signal. Every failure surfaces as an {@link ExchangeError}; {@link close} releases timers and the connection and
 * is safe to call twice.
 */
export class HttpExchange {
  readonly #fetch: FetchLike
  readonly #limits: ExchangeLimits
  readonly #signal: AbortSignal
  readonly #controller = new AbortController()
  readonly #onCallerAbort = () => this.#controller.abort()
  #firstByteTimer: ReturnType<typeof setTimeout> | undefined
  #totalTimer: ReturnType<typeof setTimeout> | undefined
  #timeout: ExchangeError | undefined
  #bytes = 0
  #closed = false
  /** The body was read to its end: nothing is left open to abort. */
  #readToEnd = false

  constructor(fetchImpl: FetchLike, limits: ExchangeLimits, options: { signal: AbortSignal }) {
    this.#fetch = fetchImpl
    this.#limits = limits
    this.#signal = options.signal
  }

  /** Body bytes read so far. */
  get bytesRead(): number {
    return this.#bytes
  }

  /**
   * Issues the request and starts both deadlines. Redirects are returned, never followed. The returned promise
   * settles later; a rejection before it is awaited is not reported as unhandled.
   */
  send(url: string, init: Omit<RequestInit, 'signal' | 'redirect'>): Promise<Response> {
    if (this.#signal.aborted) return Promise.reject(new ExchangeError('aborted', 'aborted'))
    this.#signal.addEventListener('abort', this.#onCallerAbort, { once: true })
    this.#firstByteTimer = setTimeout(() => {
      this.#expire(new ExchangeError('first_byte_timeout', `no response within ${this.#limits.firstByteMs} ms`))
    }, this.#limits.firstByteMs)
    this.#totalTimer = setTimeout(() => {
      this.#expire(new ExchangeError('total_timeout', `reply not complete within ${this.#limits.totalMs} ms`))
    }, this.#limits.totalMs)
    const pending = this.#fetch(url, { ...init, redirect: 'manual', signal: this.#controller.signal }).catch((error: unknown) => {
      throw this.#translate(error, 'unreachable')
    })
    // Awaited by the caller after it has reported `sent`; until then a rejection must not count as unhandled.
    pending.catch(() => undefined)
    return pending
  }

  /** A response byte arrived: the first-byte deadline no longer applies. */
  markFirstByte(): void {
    clearTimeout(this.#firstByteTimer)
    this.#firstByteTimer = undefined
  }

  /** The body as decoded UTF-8 text chunks, as they arrive; the first chunk clears the first-byte deadline. */
  async *text(response: Response): AsyncGenerator<string> {
    if (response.body === null) return
    const reader = response.body.getReader()
    const decoder = new TextDecoder('utf-8')
    try {
      for (;;) {
        let result: Awaited<ReturnType<typeof reader.read>>
        try {
          result = await reader.read()
        } catch (error) {
          throw this.#translate(error, 'cut_off')
        }
        if (this.#timeout !== undefined) throw this.#timeout
        if (result.done) {
          this.#readToEnd = true
          break
        }
        this.markFirstByte()
        this.#bytes += result.value.byteLength
        if (this.#bytes > this.#limits.maxBytes) {
          throw new ExchangeError('too_large', `reply exceeds ${this.#limits.maxBytes} bytes`)
        }
        const text = decoder.decode(result.value, { stream: true })
        if (text !== '') yield text
      }
      const rest = decoder.decode()
      if (rest !== '') yield rest
    } finally {
      reader.releaseLock()
    }
  }

  /** The whole body as text, within the byte limit. */
  async readAll(response: Response): Promise<string> {
    let text = ''
    for await (const chunk of this.text(response)) text += chunk
    return text
  }

  /** At most `maxChars` characters of the body, for an error report; never fails. */
  async peek(response: Response, maxChars: number): Promise<string> {
    let text = ''
    try {
      for await (const chunk of this.text(response)) {
        text += chunk
        if (text.length >= maxChars) break
      }
    } catch {
      // The body only decorates an error that is reported anyway; whatever arrived is enough.
    }
    return text.slice(0, maxChars)
  }

  /** Clears the deadlines and aborts the request if it is still open (ends the connection mid-reply). */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    clearTimeout(this.#firstByteTimer)
    clearTimeout(this.#totalTimer)
    this.#signal.removeEventListener('abort', this.#onCallerAbort)
    // A reply read to its end has nothing open. Otherwise (most SSE replies: the reader stops at the end event) the
    // abort carries one reason made once: a fresh abort error per turn, whose stack the HTTP client formats, cost
    // ~1% of the gateway's thread at 200 calls.
    if (!this.#readToEnd) this.#controller.abort(CLOSED)
  }

  #expire(error: ExchangeError): void {
    if (this.#timeout !== undefined || this.#closed) return
    this.#timeout = error
    this.#controller.abort()
  }

  #translate(error: unknown, code: 'unreachable' | 'cut_off'): ExchangeError {
    if (error instanceof ExchangeError) return error
    if (this.#signal.aborted) return new ExchangeError('aborted', 'aborted')
    if (this.#timeout !== undefined) return this.#timeout
    // Fixed words, never the error's code or message: those tell a closed port from an open one (a port scanner).
    const words = connectionFailureWords(error)
    return new ExchangeError(code, code === 'unreachable' ? `request failed: ${words}` : `connection lost: ${words}`, words)
  }
}
