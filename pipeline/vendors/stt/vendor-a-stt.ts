import type { SttVendorAOptions } from '../../options/stt-options.js'
import { VendorErrorCode } from '../socket/vendor-errors.js'
import type { VendorConnectRequest } from '../socket/vendor-transport.js'
import type { SttStream, SttStreamOptions, SttWord } from './stt-stream.js'
import { VendorAFluxSttStream } from './vendor-a-flux-stt.js'
import { WsSttStream } from './ws-stt-stream.js'
import { queryString, webSocketBase } from '../socket/ws-url.js'

/** `stt.vendor_a` options with `model_id: 'nova-3'`. */
export type VendorANova3Options = Extract<SttVendorAOptions, { model_id: 'nova-3' }>

/** Seconds the vendor's count of audio may differ from ours (a message in flight when it closed) before a warning. */
const METADATA_TOLERANCE_S = 1

/** The vendor's idle timeout is 10 s without audio; a KeepAlive every 4 s of silence stays well inside it. */
const KEEP_ALIVE_MS = 4000

/**
 * `stt.vendor_a` (Deepgram-compatible) on the nova-3 live endpoint `/v1/listen`.
 *
 * Wire mapping: interim `Results` -> `interim`; `is_final` -> `final` (non-empty only) accumulated into the turn;
 * `speech_final`, `UtteranceEnd` or a `from_finalize` result -> `end_of_turn` with the accumulated finals (once per
 * turn: an `UtteranceEnd` after `speech_final` is ignored); `SpeechStarted` -> `speech_started`; `Metadata` logged.
 * Client: binary audio, `KeepAlive` on idle ticks, `Finalize` on finalize(), `CloseStream` on close().
 * Closes: 1011 (NET-0001, no audio for 10 s) and restarts reconnect; 1008 (DATA-0000, undecodable audio) is fatal.
 */
export class VendorANova3SttStream extends WsSttStream {
  readonly #options: VendorANova3Options
  readonly #endpoint: SttStreamOptions['endpoint']
  #finals: string[] = []

  constructor(options: VendorANova3Options, stream: SttStreamOptions) {
    super('stt.vendor_a', stream, KEEP_ALIVE_MS)
    this.#options = options
    this.#endpoint = stream.endpoint
  }

  protected connectRequest(): VendorConnectRequest {
    const query = queryString([
      ['model', 'nova-3'],
      ['encoding', this.audio.codec === 'ulaw' ? 'mulaw' : 'linear16'],
      ['sample_rate', this.audio.sampleRate],
      ['channels', 1],
      ['interim_results', true],
      ['endpointing', this.#options.endpointing_ms],
      ['utterance_end_ms', this.#options.utterance_end_ms],
      ['vad_events', true],
      ['smart_format', true],
      ['language', this.#options.language],
      ...(this.#options.keyterms ?? []).map((term) => ['keyterm', term] as const),
    ])
    return {
      url: `${webSocketBase(this.#endpoint.url)}/v1/listen?${query}`,
      headers: { Authorization: `Token ${this.#endpoint.apiKey}` },
    }
  }

  protected handleMessage(data: Buffer, isBinary: boolean): void {
    if (isBinary) throw new Error('unexpected binary frame')
    const message = JSON.parse(data.toString('utf8')) as Record<string, unknown>
    switch (message.type) {
      case 'Results':
        return this.#onResults(message)
      case 'SpeechStarted':
        return this.emit({ type: 'speech_started' })
      case 'UtteranceEnd':
        if (this.#finals.length > 0) this.#endTurn()
        return
      case 'Metadata':
        return this.#onMetadata(message)
      case 'Error':
        return this.emit({
          type: 'error',
          code: VendorErrorCode.VendorError,
          message: `${this.label}: ${String(message.description ?? message.message ?? 'vendor error')}`,
          fatal: false,
        })
      default:
        this.logger.debug({ stream: this.label, type: message.type }, 'ignored vendor message')
    }
  }

  #onResults(message: Record<string, unknown>): void {
    const channel = message.channel as { alternatives?: Array<{ transcript?: unknown; words?: unknown }> } | undefined
    const raw = channel?.alternatives?.[0]?.transcript
    const text = typeof raw === 'string' ? raw.trim() : ''
    const isFinal = message.is_final === true
    if (!isFinal) {
      if (text) this.emit({ type: 'interim', text })
      return
    }
    if (text) {
      this.#finals.push(text)
      const words = this.inputWords(resultWords(channel?.alternatives?.[0]?.words))
      this.emit({ type: 'final', text, ...(words.length > 0 && { words }) })
    }
    if ((message.speech_final === true || message.from_finalize === true) && this.#finals.length > 0) {
      this.#endTurn()
    }
  }

  /**
   * `duration` is the seconds of audio the vendor received on this connection (what it bills): far from what was
   * sent means the two disagree on the audio format.
   */
  #onMetadata(message: Record<string, unknown>): void {
    const audioSeconds = typeof message.duration === 'number' ? message.duration : undefined
    const sentSeconds = this.wireSeconds
    const fields = { stream: this.label, requestId: message.request_id, audioSeconds, sentSeconds }
    if (audioSeconds !== undefined && Math.abs(audioSeconds - sentSeconds) > METADATA_TOLERANCE_S) {
      this.logger.warn(fields, 'the vendor counted a different length of audio than was sent')
    } else this.logger.debug(fields, 'vendor metadata')
  }

  #endTurn(): void {
    const text = this.#finals.join(' ')
    this.#finals = []
    this.endTurn(text)
  }

  protected sendFinalize(): void {
    this.sendJson({ type: 'Finalize' })
  }

  protected sendGoodbye(): void {
    this.sendJson({ type: 'CloseStream' })
  }

  protected override onKeepAliveTick(idle: boolean): void {
    if (idle) this.sendJson({ type: 'KeepAlive' })
  }

  /**
   * Deepgram "may" answer a Finalize with `from_finalize` (not when little audio was left), so the consumer can end
   * the turn on its own timeout; a late answer must then find no finals here to end the turn with again.
   */
  protected override forgetTurn(): void {
    this.#finals = []
  }

  protected override resetTurn(replayCoversTurn: boolean): void {
    // The replayed audio re-produces the turn's finals; keep them only when the replay cannot.
    if (replayCoversTurn) this.#finals = []
  }
}

/** Create and start a `stt.vendor_a` stream for the configured model (nova-3 or flux). */
export function createVendorASttStream(options: SttVendorAOptions, stream: SttStreamOptions): SttStream {
  if (options.model_id === 'flux') return new VendorAFluxSttStream(options, stream).start()
  return new VendorANova3SttStream(options, stream).start()
}

/**
 * The words of a `Results` alternative (`word`, `punctuated_word`, `start`, `end` in seconds of the connection's
 * audio). The punctuated form is the one the transcript is made of (smart_format).
 */
function resultWords(raw: unknown): SttWord[] {
  if (!Array.isArray(raw)) return []
  const out: SttWord[] = []
  for (const w of raw as Array<Record<string, unknown>>) {
    const word = typeof w.punctuated_word === 'string' ? w.punctuated_word : w.word
    if (typeof word !== 'string' || typeof w.start !== 'number' || typeof w.end !== 'number') continue
    out.push({ word, start: w.start, end: w.end })
  }
  return out
}
