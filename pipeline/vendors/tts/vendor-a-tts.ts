import type { TtsVendorAOptions } from '../../options/tts-options.js'
import { VendorErrorCode } from '../socket/vendor-errors.js'
import { queryString, webSocketBase } from '../socket/ws-url.js'
import type { VendorConnectRequest } from '../socket/vendor-transport.js'
import { WsVendorStream, type WsVendorStreamOptions } from '../socket/ws-vendor-stream.js'
import { type TtsContextState, TtsContexts } from './tts-contexts.js'
import type { TtsAudioEvent, TtsDoneEvent, TtsErrorEvent, TtsEvent, TtsStream, TtsStreamOptions } from './tts-stream.js'

/** Text that ends a sentence (closing quotes and brackets allowed, trailing space ignored). */
const SENTENCE_END = /[.!?;:\n]["'”’)\]]*\s*$/
/**
 * The vendor closes a context after 20 s without a message for it (`inactivity_timeout`, default 20); an empty-text
 * message for every open context idle for 10 s keeps it alive while the agent is still thinking.
 */
const KEEP_ALIVE_MS = 10_000
/** Messages held while (re)connecting; text beyond this is dropped with a warning. */
const OUTBOX_LIMIT = 1000

interface ContextState extends TtsContextState {
  /** Some message of this context reached the vendor, so the vendor knows it. */
  onWire: boolean
  lastSentAt: number
}

interface OutboxItem {
  contextId: string | undefined
  message: Record<string, unknown>
}

/**
 * `tts.vendor_a` (ElevenLabs-compatible multi-context WebSocket, `/v1/text-to-speech/{voice_id}/multi-stream-input`).
 *
 * Requests use `context_id`, replies use `contextId` / `isFinal`. A context opens with `{text:" ", context_id,
 * voice_settings?}`; text is sent as `{text, context_id}` with a trailing space added when missing (the vendor expects
 * every chunk to end with one). flush() sends `{context_id, flush:true}` then `{context_id, close_context:true}`: the
 * vendor finishes the flushed audio and answers `isFinal`, which becomes `done`. cancel() sends `close_context` and
 * drops every later frame of the context at once. close() sends `{close_socket:true}` and waits for the vendor.
 * Messages issued while (re)connecting wait in a bounded outbox. Contexts in flight when the socket drops are
 * reported as `tts_context_lost` + `done` (their audio is incomplete). An idle socket the vendor closes is reopened
 * on the next pushText.
 */
export class VendorATtsStream extends WsVendorStream<TtsAudioEvent | TtsDoneEvent | TtsErrorEvent> implements TtsStream {
  readonly #options: TtsVendorAOptions
  readonly #stream: TtsStreamOptions
  readonly #keepAliveMs: number
  readonly #contexts = new TtsContexts<ContextState>(this.label, this.logger)
  #outbox: OutboxItem[] = []

  constructor(options: TtsVendorAOptions, stream: TtsStreamOptions) {
    const base: WsVendorStreamOptions<TtsAudioEvent | TtsDoneEvent | TtsErrorEvent> = { ...stream.transport, label: 'tts.vendor_a' }
    if (stream.signal) base.signal = stream.signal
    if (stream.logger) base.logger = stream.logger
    super(base, KEEP_ALIVE_MS)
    this.#options = options
    this.#stream = stream
    this.#keepAliveMs = stream.transport?.keepAliveMs ?? KEEP_ALIVE_MS
  }

  protected connectRequest(): VendorConnectRequest {
    const query = queryString([
      ['model_id', this.#options.model_id],
      ['output_format', this.#stream.outputFormat],
    ])
    const voice = encodeURIComponent(this.#options.voice_id)
    return {
      url: `${webSocketBase(this.#stream.endpoint.url)}/v1/text-to-speech/${voice}/multi-stream-input?${query}`,
      headers: { 'xi-api-key': this.#stream.endpoint.apiKey },
    }
  }

  pushText(contextId: string, text: string): void {
    if (this.closed) return
    const context = this.#contexts.forText(
      contextId,
      text,
      () => ({ phase: 'open', onWire: false, lastSentAt: Date.now() }),
      () => this.#send(contextId, this.#openingMessage(contextId)),
    )
    if (context === undefined) return
    // A finished sentence is generated at once (`flush` in a text message keeps the context open): without
    // it the vendor waits for its chunk schedule to fill, and a streamed reply would stay silent until the end.
    const sentenceEnd = SENTENCE_END.test(text)
    this.#send(contextId, { text: /\s$/.test(text) ? text : `${text} `, context_id: contextId, ...(sentenceEnd && { flush: true }) })
  }

  flush(contextId: string): void {
    if (this.closed || this.#contexts.flush(contextId) === undefined) return
    this.#send(contextId, { context_id: contextId, flush: true })
    this.#send(contextId, { context_id: contextId, close_context: true })
  }

  cancel(contextId: string): void {
    const context = this.#contexts.get(contextId)
    if (!this.#contexts.cancel(contextId)) return
    this.#outbox = this.#outbox.filter((item) => item.contextId !== contextId)
    if (context?.onWire && !this.closed) this.sendJson({ context_id: contextId, close_context: true })
  }

  /** A context opens with a space (and the voice settings), as the vendor's multi-context protocol asks. */
  #openingMessage(contextId: string): Record<string, unknown> {
    const init: Record<string, unknown> = { text: ' ', context_id: contextId }
    if (this.#options.speed !== undefined) init.voice_settings = { speed: this.#options.speed }
    return init
  }

  #send(contextId: string, message: Record<string, unknown>): void {
    if (this.isOpen && this.#outbox.length === 0) {
      this.#write({ contextId, message })
      return
    }
    if (this.#outbox.length >= OUTBOX_LIMIT) {
      this.logger.warn({ stream: this.label, contextId }, 'outbox full while connecting, message dropped')
      return
    }
    this.#outbox.push({ contextId, message })
    this.ensureConnected()
  }

  #write(item: OutboxItem): void {
    if (!this.sendJson(item.message)) return
    const context = item.contextId === undefined ? undefined : this.#contexts.get(item.contextId)
    if (context) {
      context.onWire = true
      context.lastSentAt = Date.now()
    }
  }

  protected override onOpen(): void {
    const outbox = this.#outbox
    this.#outbox = []
    for (const item of outbox) this.#write(item)
  }

  protected override onDisconnect(): void {
    for (const [contextId, context] of this.#contexts) {
      if (!context.onWire) continue
      this.#contexts.cancel(contextId)
      this.#outbox = this.#outbox.filter((item) => item.contextId !== contextId)
      this.emit({
        type: 'error',
        code: VendorErrorCode.ContextLost,
        message: `${this.label}: socket dropped while context ${contextId} was speaking`,
        fatal: false,
        contextId,
      })
      this.emit({ type: 'done', contextId })
    }
  }

  protected override wantsConnection(): boolean {
    return this.#contexts.size > 0 || this.#outbox.length > 0
  }

  protected override onKeepAliveTick(): void {
    const now = Date.now()
    for (const [contextId, context] of this.#contexts) {
      if (context.phase === 'open' && context.onWire && now - context.lastSentAt >= this.#keepAliveMs) {
        this.#write({ contextId, message: { text: '', context_id: contextId } })
      }
    }
  }

  protected handleMessage(data: Buffer, isBinary: boolean): void {
    if (isBinary) throw new Error('unexpected binary frame')
    const message = JSON.parse(data.toString('utf8')) as Record<string, unknown>
    const rawId = message.contextId ?? message.context_id
    const contextId = typeof rawId === 'string' ? rawId : undefined
    if (contextId !== undefined && this.#contexts.isCancelled(contextId)) return
    const audio = message.audio
    if (typeof audio === 'string' && audio.length > 0) {
      if (contextId !== undefined && this.#contexts.has(contextId)) {
        this.emit({ type: 'audio', contextId, audio: Buffer.from(audio, 'base64') })
      } else {
        this.logger.debug({ stream: this.label, contextId }, 'audio for an unknown context dropped')
      }
    }
    if (message.isFinal === true && contextId !== undefined && this.#contexts.delete(contextId)) {
      this.emit({ type: 'done', contextId })
      return
    }
    if (audio === undefined && (message.error !== undefined || message.message !== undefined)) {
      const detail = message.message ?? message.error
      this.emit({
        type: 'error',
        code: VendorErrorCode.VendorError,
        message: `${this.label}: ${String(detail)}`,
        fatal: false,
        ...(contextId === undefined ? {} : { contextId }),
        ...(typeof message.error === 'string' ? { vendorCode: message.error } : {}),
      })
    }
  }

  protected sendGoodbye(): void {
    this.sendJson({ close_socket: true })
  }

  override [Symbol.asyncIterator](): AsyncIterator<TtsEvent, undefined> {
    return super[Symbol.asyncIterator]()
  }
}

/** Create and start a `tts.vendor_a` stream (connects at once so the first utterance does not wait). */
export function createVendorATtsStream(options: TtsVendorAOptions, stream: TtsStreamOptions): TtsStream {
  return new VendorATtsStream(options, stream).start()
}
