import type { SttVendorAOptions } from '../../options/stt-options.js'
import { VendorErrorCode } from '../socket/vendor-errors.js'
import type { VendorConnectRequest } from '../socket/vendor-transport.js'
import type { SttStreamOptions, SttWord } from './stt-stream.js'
import { bytesPerSecond } from '../../audio/audio-format.js'
import { WsSttStream } from './ws-stt-stream.js'
import { queryString, webSocketBase } from '../socket/ws-url.js'

/** `stt.vendor_a` options with `model_id: 'flux'`, plus the vendor's optional end-of-turn tuning. */
export type VendorAFluxOptions = Extract<SttVendorAOptions, { model_id: 'flux' }> & {
  eot_threshold?: number
  eot_timeout_ms?: number
}

/**
 * The turn-based endpoint has no KeepAlive message, so when no audio flowed for a tick (VAD-gated input) a short
 * stretch of silence is sent instead: silence is what the caller was producing anyway.
 */
const KEEP_ALIVE_MS = 4000
const SILENCE_MS = 80

/**
 * `stt.vendor_a` with model `flux` (Deepgram-compatible `/v2/listen`, turn-based).
 *
 * Wire mapping of `TurnInfo.event`: `StartOfTurn` -> `speech_started` (+ `interim` when it carries text);
 * `Update` -> `interim` when the transcript changed; `EndOfTurn` -> `final` (with the words' `start`/`end`, seconds
 * of the connection's audio, moved onto the pushed audio's clock for the recording's silencing) + `end_of_turn` with
 * the turn transcript; `EagerEndOfTurn` / `TurnResumed` are ignored (they only occur when `eager_eot_threshold` is
 * set, which this adapter never sends). `Error` -> non-fatal `error` (the close that follows decides). Client:
 * binary audio, `ForceEndTurn` on finalize(), `CloseStream` on close().
 *
 * Flux ignores `ForceEndTurn` when no turn is in progress (its state machine has no such edge): nothing answers
 * that finalize, and no end of turn is made up here; the consumer's `base_timeout_ms` fallback ends a turn Flux
 * never heard, as it does for a `Finalize` that nova-3 answers without `from_finalize`.
 */
export class VendorAFluxSttStream extends WsSttStream {
  readonly #options: VendorAFluxOptions
  readonly #endpoint: SttStreamOptions['endpoint']
  #lastInterim = ''

  constructor(options: VendorAFluxOptions, stream: SttStreamOptions) {
    super('stt.vendor_a', stream, KEEP_ALIVE_MS)
    this.#options = options
    this.#endpoint = stream.endpoint
  }

  protected connectRequest(): VendorConnectRequest {
    const pairs: Array<readonly [string, string | number]> = [
      ['model', 'flux-general-en'],
      ['encoding', this.audio.codec === 'ulaw' ? 'mulaw' : 'linear16'],
      ['sample_rate', this.audio.sampleRate],
    ]
    if (this.#options.eot_threshold !== undefined) pairs.push(['eot_threshold', this.#options.eot_threshold])
    if (this.#options.eot_timeout_ms !== undefined) pairs.push(['eot_timeout_ms', this.#options.eot_timeout_ms])
    for (const term of this.#options.keyterms ?? []) pairs.push(['keyterm', term])
    return {
      url: `${webSocketBase(this.#endpoint.url)}/v2/listen?${queryString(pairs)}`,
      headers: { Authorization: `Token ${this.#endpoint.apiKey}` },
    }
  }

  protected handleMessage(data: Buffer, isBinary: boolean): void {
    if (isBinary) throw new Error('unexpected binary frame')
    const message = JSON.parse(data.toString('utf8')) as Record<string, unknown>
    if (message.type === 'Connected') {
      this.logger.debug({ stream: this.label, requestId: message.request_id }, 'vendor connected')
      return
    }
    if (message.type === 'Error') {
      this.emit({
        type: 'error',
        code: VendorErrorCode.VendorError,
        message: `${this.label}: ${String(message.description ?? 'vendor error')}`,
        fatal: false,
        ...(typeof message.code === 'string' ? { vendorCode: message.code } : {}),
      })
      return
    }
    if (message.type !== 'TurnInfo') {
      this.logger.debug({ stream: this.label, type: message.type }, 'ignored vendor message')
      return
    }
    const text = typeof message.transcript === 'string' ? message.transcript.trim() : ''
    switch (message.event) {
      case 'StartOfTurn':
        this.emit({ type: 'speech_started' })
        this.#interim(text)
        return
      case 'Update':
        this.#interim(text)
        return
      case 'EndOfTurn': {
        this.#lastInterim = ''
        const words = this.inputWords(turnWords(message.words))
        if (text) this.emit({ type: 'final', text, ...(words.length > 0 && { words }) })
        this.endTurn(text)
        return
      }
      default:
        return // EagerEndOfTurn, TurnResumed: see class comment
    }
  }

  #interim(text: string): void {
    if (!text || text === this.#lastInterim) return
    this.#lastInterim = text
    this.emit({ type: 'interim', text })
  }

  protected sendFinalize(): void {
    this.sendJson({ type: 'ForceEndTurn' })
  }

  protected sendGoodbye(): void {
    this.sendJson({ type: 'CloseStream' })
  }

  protected override onKeepAliveTick(idle: boolean): void {
    if (!idle) return
    const bytes = Math.round((bytesPerSecond(this.format) * SILENCE_MS) / 1000)
    this.sentFiller(bytes)
    this.sendBinary(Buffer.alloc(bytes, this.audio.silenceByte))
  }

  protected override resetTurn(): void {
    this.#lastInterim = ''
  }
}

/**
 * The timed words of a `TurnInfo` (`word` punctuated as in the transcript, `start`/`end` in seconds of the
 * connection's audio: Flux's word-level timestamps, 2026-07-02). Words without timings are left out.
 */
function turnWords(raw: unknown): SttWord[] {
  if (!Array.isArray(raw)) return []
  const out: SttWord[] = []
  for (const w of raw as Array<Record<string, unknown>>) {
    if (typeof w.word !== 'string' || typeof w.start !== 'number' || typeof w.end !== 'number') continue
    out.push({ word: w.word, start: w.start, end: w.end })
  }
  return out
}
