import { WebSocket } from 'ws'
import { sleep } from '../../runtime/abort.js'
import { AsyncQueue } from '../../runtime/async-queue.js'
import { silentLogger, type PipelineLogger } from '../../runtime/logger.js'
import type { ReconnectPolicy, VendorConnectRequest, VendorTransportOptions } from './vendor-transport.js'
import { closeInfo, errorMessage, upgradeStatus, waitForClose } from './ws-socket.js'
import {
  type CloseVerdict,
  VendorErrorCode,
  type VendorErrorEvent,
  type VendorReconnectedEvent,
  verdictForCloseCode,
  verdictForUpgradeStatus,
} from './vendor-errors.js'

/** Options every {@link WsVendorStream} takes. */
export interface WsVendorStreamOptions<E> extends VendorTransportOptions {
  /** Name used in logs and error messages, e.g. `stt.vendor_a`. */
  label: string
  signal?: AbortSignal
  logger?: PipelineLogger
  /** Events the queue may drop first when the consumer falls behind. */
  isDroppable?: (event: E) => boolean
}

const DEFAULT_RECONNECT: ReconnectPolicy = { maxAttempts: 5, initialDelayMs: 200, maxDelayMs: 5000, stableAfterMs: 5000 }

type State = 'idle' | 'connecting' | 'open' | 'backoff' | 'closing' | 'closed'

/**
 * Base of every WebSocket vendor stream (STT and TTS). It owns the socket lifecycle so adapters only map the wire:
 * connect with the caller's AbortSignal, reconnect on unexpected close with bounded backoff, a keep-alive tick,
 * close-twice safety, and a bounded event queue read as an async iterable (drop policy: see {@link AsyncQueue}).
 *
 * Call {@link start} once after construction; constructors do no I/O.
 */
export abstract class WsVendorStream<E extends { type: string }> implements AsyncIterable<E | VendorErrorEvent | VendorReconnectedEvent> {
  protected readonly logger: PipelineLogger
  protected readonly label: string
  readonly #queue: AsyncQueue<E | VendorErrorEvent | VendorReconnectedEvent>
  readonly #policy: ReconnectPolicy
  readonly #keepAliveMs: number
  readonly #connectTimeoutMs: number
  readonly #closeTimeoutMs: number
  readonly #lifetime = new AbortController()
  readonly #signal: AbortSignal | undefined
  readonly #onExternalAbort = () => this.#shutdown()
  #state: State = 'idle'
  #ws: WebSocket | undefined
  #everOpened = false
  #activitySinceTick = false
  #keepAliveTimer: NodeJS.Timeout | undefined
  #closePromise: Promise<void> | undefined

  protected constructor(options: WsVendorStreamOptions<E>, keepAliveDefaultMs: number) {
    this.label = options.label
    this.logger = options.logger ?? silentLogger
    this.#policy = { ...DEFAULT_RECONNECT, ...options.reconnect }
    this.#keepAliveMs = options.keepAliveMs ?? keepAliveDefaultMs
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 10_000
    this.#closeTimeoutMs = options.closeTimeoutMs ?? 3000
    this.#signal = options.signal
    const isDroppable = options.isDroppable
    this.#queue = new AsyncQueue({
      capacity: options.eventQueueSize ?? 512,
      isDroppable: (event) => isDroppable !== undefined && event.type !== 'error' && isDroppable(event as E),
      onDrop: (event) => this.logger.warn({ stream: this.label, event: event.type }, 'event queue full, dropped an event'),
    })
  }

  /** The URL and headers of the next connect attempt. */
  protected abstract connectRequest(): VendorConnectRequest
  /** One frame from the vendor. Throwing yields a non-fatal protocol error. */
  protected abstract handleMessage(data: Buffer, isBinary: boolean): void
  /** Send the vendor's graceful-close message (CloseStream, Terminate, close_socket). */
  protected abstract sendGoodbye(): void
  /** The socket is open (again); `reconnected` is false the first time. Replay state here. */
  protected onOpen(_reconnected: boolean): void {}
  /** The socket dropped unexpectedly and a reconnect will be tried. */
  protected onDisconnect(): void {}
  /** Keep-alive tick; `idle` is true when nothing was marked as activity since the previous tick. */
  protected onKeepAliveTick(_idle: boolean): void {}
  /** Whether to reconnect at once after a drop; false parks the stream until {@link ensureConnected}. */
  protected wantsConnection(): boolean {
    return true
  }
  /** Verdict on a close the vendor initiated; adapters add vendor-specific codes. */
  protected classifyClose(code: number, reason: string): CloseVerdict {
    return verdictForCloseCode(code, reason)
  }

  /** Start connecting (or fail at once when the signal already aborted). Idempotent. */
  start(): this {
    if (this.#state !== 'idle' || this.#closePromise) return this
    if (this.#signal?.aborted) {
      this.#shutdown()
      return this
    }
    this.#signal?.addEventListener('abort', this.#onExternalAbort, { once: true })
    void this.#run()
    return this
  }

  /** Reconnect a stream parked by {@link wantsConnection}; a no-op in any other state. */
  protected ensureConnected(): void {
    if (this.#state === 'idle' && this.#everOpened && !this.#closePromise) void this.#run()
  }

  /** True while the socket is open and not closing. */
  protected get isOpen(): boolean {
    return this.#state === 'open' && this.#ws?.readyState === WebSocket.OPEN
  }

  /** True once close() was called, the signal aborted or a fatal error ended the stream. */
  get closed(): boolean {
    return this.#state === 'closing' || this.#state === 'closed'
  }

  /** Queue an event for the consumer (ignored once the stream has ended). */
  protected emit(event: E | VendorErrorEvent | VendorReconnectedEvent): void {
    this.#queue.push(event)
  }

  /** Send JSON if the socket is open; returns whether it was sent. */
  protected sendJson(message: object): boolean {
    const ws = this.#ws
    if (!ws || ws.readyState !== WebSocket.OPEN) return false
    ws.send(JSON.stringify(message))
    return true
  }

  /** Send a binary frame if the socket is open; counts as keep-alive activity. */
  protected sendBinary(data: Buffer): boolean {
    const ws = this.#ws
    if (!ws || ws.readyState !== WebSocket.OPEN) return false
    ws.send(data, { binary: true })
    this.#activitySinceTick = true
    return true
  }

  /** Close the socket from our side (a goodbye for vendors whose protocol has no goodbye message of its own). */
  protected closeSocket(): void {
    this.#ws?.close(1000)
  }

  /** Note activity that makes a keep-alive unnecessary this tick. */
  protected markActivity(): void {
    this.#activitySinceTick = true
  }

  /** End with a fatal error: the event is yielded, then iteration finishes. */
  protected fail(code: VendorErrorEvent['code'], message: string, vendorCode?: string | number): void {
    if (this.#state === 'closed') return
    this.emit({ type: 'error', code, message, fatal: true, ...(vendorCode === undefined ? {} : { vendorCode }) })
    this.#shutdown()
  }

  /**
   * Graceful close: send the vendor's goodbye, keep reading until the vendor closes (or `closeTimeoutMs`), then end
   * iteration. Idempotent: every call returns the same promise.
   */
  close(): Promise<void> {
    this.#closePromise ??= this.#gracefulClose()
    return this.#closePromise
  }

  [Symbol.asyncIterator](): AsyncIterator<E | VendorErrorEvent | VendorReconnectedEvent, undefined> {
    return this.#queue[Symbol.asyncIterator]()
  }

  async #gracefulClose(): Promise<void> {
    if (this.#state === 'closed') return
    const ws = this.#ws
    const wasOpen = this.#state === 'open' && ws?.readyState === WebSocket.OPEN
    this.#state = 'closing'
    this.#lifetime.abort()
    if (ws && wasOpen) {
      try {
        this.sendGoodbye()
      } catch (error) {
        this.logger.warn({ stream: this.label, err: error }, 'sending the goodbye message failed')
      }
      await waitForClose(ws, this.#closeTimeoutMs)
    }
    this.#shutdown()
  }

  /** Stop everything now: no goodbye, socket terminated, iteration ends after queued events. */
  #shutdown(): void {
    if (this.#state === 'closed') return
    this.#state = 'closed'
    this.#closePromise ??= Promise.resolve()
    this.#lifetime.abort()
    this.#stopKeepAlive()
    this.#signal?.removeEventListener('abort', this.#onExternalAbort)
    const ws = this.#ws
    this.#ws = undefined
    if (ws && ws.readyState !== WebSocket.CLOSED) ws.terminate()
    this.#queue.end()
  }

  async #run(): Promise<void> {
    let attempts = 0
    while (!this.closed) {
      this.#state = 'connecting'
      let ws: WebSocket
      let closedInfo: Promise<{ code: number; reason: string }>
      try {
        ;({ ws, closedInfo } = await this.#connect())
      } catch (error) {
        if (this.closed) return
        const status = upgradeStatus(error)
        const verdict = status === undefined ? ({ action: 'retry' } as const) : verdictForUpgradeStatus(status)
        if (verdict.action === 'fatal') return this.fail(verdict.code, `${this.label}: ${verdict.message}`, status)
        attempts++
        this.logger.warn({ stream: this.label, attempts, err: errorMessage(error) }, 'connect failed')
        if (!(await this.#backoff(attempts))) return
        continue
      }
      const openedAt = Date.now()
      const reconnected = this.#everOpened
      this.#everOpened = true
      this.#ws = ws
      this.#state = 'open'
      if (reconnected) this.emit({ type: 'reconnected' })
      this.onOpen(reconnected)
      this.#startKeepAlive()
      const { code, reason } = await closedInfo
      this.#stopKeepAlive()
      if (this.#ws === ws) this.#ws = undefined
      if (this.closed) return
      if (Date.now() - openedAt >= this.#policy.stableAfterMs) attempts = 0
      const verdict = this.classifyClose(code, reason)
      if (verdict.action === 'fatal') return this.fail(verdict.code, `${this.label}: ${verdict.message}`, code)
      this.onDisconnect()
      if (!this.wantsConnection()) {
        this.logger.debug({ stream: this.label, code, reason }, 'vendor closed an idle socket; reconnecting on demand')
        this.#state = 'idle'
        return
      }
      this.emit({
        type: 'error',
        code: VendorErrorCode.Disconnected,
        message: `${this.label}: socket closed unexpectedly (${code} ${reason})`.trim(),
        fatal: false,
        vendorCode: code,
      })
      attempts++
      if (!(await this.#backoff(attempts))) return
    }
  }

  /** Wait before the next attempt; false when the stream ended (or gave up) meanwhile. */
  async #backoff(attempts: number): Promise<boolean> {
    if (attempts > this.#policy.maxAttempts) {
      this.fail(VendorErrorCode.ReconnectExhausted, `${this.label}: gave up after ${attempts - 1} reconnect attempts`)
      return false
    }
    this.#state = 'backoff'
    const delay = Math.min(this.#policy.maxDelayMs, this.#policy.initialDelayMs * 2 ** (attempts - 1))
    try {
      await sleep(delay, { signal: this.#lifetime.signal })
    } catch {
      return false // closed or aborted while waiting
    }
    return !this.closed
  }

  #connect(): Promise<{ ws: WebSocket; closedInfo: Promise<{ code: number; reason: string }> }> {
    const { url, headers } = this.connectRequest()
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers, handshakeTimeout: this.#connectTimeoutMs, perMessageDeflate: false })
      // Attached before 'open': frames that arrive with the upgrade response are emitted before any await resumes.
      ws.on('message', (data: Buffer, isBinary: boolean) => this.#dispatch(data, isBinary))
      const closedInfo = closeInfo(ws)
      const onAbort = () => ws.terminate()
      this.#lifetime.signal.addEventListener('abort', onAbort, { once: true })
      const settle = () => this.#lifetime.signal.removeEventListener('abort', onAbort)
      ws.on('error', (error) => {
        settle()
        // After open, an error is always followed by 'close', which drives the reconnect logic.
        this.logger.debug({ stream: this.label, err: errorMessage(error) }, 'socket error')
        reject(error)
      })
      ws.once('open', () => {
        settle()
        resolve({ ws, closedInfo })
      })
    })
  }

  #dispatch(data: Buffer, isBinary: boolean): void {
    if (this.#state === 'closed') return
    try {
      this.handleMessage(data, isBinary)
    } catch (error) {
      // A JSON parser's message quotes the text it choked on, which may be a caller's words: never logged.
      const detail = error instanceof SyntaxError ? `invalid JSON (${data.length} bytes)` : errorMessage(error)
      this.logger.warn({ stream: this.label, err: detail }, 'could not handle a vendor message')
      this.emit({
        type: 'error',
        code: VendorErrorCode.ProtocolError,
        message: `${this.label}: unreadable vendor message (${detail})`,
        fatal: false,
      })
    }
  }

  #startKeepAlive(): void {
    if (this.#keepAliveMs <= 0) return
    this.#activitySinceTick = false
    this.#keepAliveTimer = setInterval(() => {
      if (!this.isOpen) return
      const idle = !this.#activitySinceTick
      this.#activitySinceTick = false
      this.onKeepAliveTick(idle)
    }, this.#keepAliveMs)
    this.#keepAliveTimer.unref()
  }

  #stopKeepAlive(): void {
    if (this.#keepAliveTimer !== undefined) clearInterval(this.#keepAliveTimer)
    this.#keepAliveTimer = undefined
  }
}
