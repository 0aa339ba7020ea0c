import type { SttVendorBOptions } from '../../options/stt-options.js'
import { type CloseVerdict, VendorErrorCode, verdictForCloseCode } from '../socket/vendor-errors.js'
import type { VendorConnectRequest } from '../socket/vendor-transport.js'
import type { SttStream, SttStreamOptions, SttWord } from './stt-stream.js'
import { bytesPerSecond } from '../../audio/audio-format.js'
import { WsSttStream } from './ws-stt-stream.js'
import { queryString, webSocketBase } from '../socket/ws-url.js'

/** The vendor accepts 50 to 1000 ms of audio per binary message and closes the session (3007) otherwise. */
const MIN_CHUNK_MS = 50
const MAX_CHUNK_MS = 1000

interface TurnWord {
  text?: unknown
  /** ms of the session's audio. */
  start?: unknown
  end?: unknown
}

/**
 * `stt.vendor_b` (AssemblyAI Universal-Streaming v3, `/v3/ws`).
 *
 * Audio is re-chunked to 50..1000 ms per message (carrier frames are 20 ms); a remainder under 50 ms is padded with
 * silence before `ForceEndpoint` and `Terminate` so no audio is lost. Wire mapping: `SpeechStarted` (or the first
 * non-empty `Turn` of a turn) -> `speech_started`; `Turn` with `end_of_turn: false` -> `interim` (all words, final or
 * not); the formatted `Turn` with `end_of_turn: true` (we always ask for `format_turns=true`; the unformatted end
 * message only updates the interim) -> `final` + `end_of_turn`; `Begin`/`Termination` are logged; `Error`
 * -> non-fatal `error` (the close that follows decides). Closes 1008 / 4001 (key) and 3006 / 3007 (our messages)
 * are fatal; 3005 (server error), 3008 (session expired) and 3009 (concurrency) reconnect with backoff.
 */
export class VendorBSttStream extends WsSttStream {
  readonly #options: SttVendorBOptions
  readonly #endpoint: SttStreamOptions['endpoint']
  readonly #minBytes: number
  readonly #maxBytes: number
  #pending: Buffer[] = []
  #pendingBytes = 0
  #inTurn = false
  #lastInterim = ''

  constructor(options: SttVendorBOptions, stream: SttStreamOptions) {
    // Audio goes out in the vendor's own 50-1000 ms messages (`sendAudio`), not the shared 60 ms ones.
    super('stt.vendor_b', stream, 0, 0)
    this.#options = options
    this.#endpoint = stream.endpoint
    const width = this.audio.bytesPerSample
    const perMs = bytesPerSecond(this.format) / 1000
    this.#minBytes = Math.ceil((perMs * MIN_CHUNK_MS) / width) * width
    this.#maxBytes = Math.floor((perMs * MAX_CHUNK_MS) / width) * width
  }

  protected connectRequest(): VendorConnectRequest {
    const o = this.#options
    const pairs: Array<readonly [string, string | number | boolean]> = [
      ['sample_rate', this.audio.sampleRate],
      ['encoding', this.audio.codec === 'ulaw' ? 'pcm_mulaw' : 'pcm_s16le'],
      ['speech_model', o.speech_model],
      ['format_turns', true],
      ['end_of_turn_confidence_threshold', o.end_of_turn_confidence_threshold],
      ['min_end_of_turn_silence_when_confident', o.min_end_of_turn_silence_when_confident],
      ['max_turn_silence', o.max_turn_silence],
    ]
    if (o.word_boost && o.word_boost.length > 0) pairs.push(['keyterms_prompt', JSON.stringify(o.word_boost)])
    return {
      url: `${webSocketBase(this.#endpoint.url)}/v3/ws?${queryString(pairs)}`,
      headers: { Authorization: this.#endpoint.apiKey },
    }
  }

  protected override sendAudio(chunk: Buffer): void {
    this.#pending.push(chunk)
    this.#pendingBytes += chunk.length
    if (this.#pendingBytes < this.#minBytes) return
    let data = Buffer.concat(this.#pending, this.#pendingBytes)
    while (data.length >= this.#minBytes) {
      let size = data.length
      if (size > this.#maxBytes) size = size - this.#maxBytes >= this.#minBytes ? this.#maxBytes : size - this.#minBytes
      this.sendBinary(data.subarray(0, size))
      data = data.subarray(size)
    }
    this.#pending = data.length > 0 ? [data] : []
    this.#pendingBytes = data.length
  }

  /** Send what is pending, padded with silence up to the 50 ms minimum. */
  #flushPending(): void {
    if (this.#pendingBytes === 0) return
    const pad = Buffer.alloc(this.#minBytes - this.#pendingBytes, this.audio.silenceByte)
    this.sentFiller(pad.length)
    const data = Buffer.concat([...this.#pending, pad])
    this.#pending = []
    this.#pendingBytes = 0
    this.sendBinary(data)
  }

  protected sendFinalize(): void {
    this.#flushPending()
    this.sendJson({ type: 'ForceEndpoint' })
  }

  protected sendGoodbye(): void {
    this.#flushPending()
    this.sendJson({ type: 'Terminate' })
  }

  protected override onDisconnect(): void {
    // Pending bytes are also in the replay buffer; drop them so the replay does not send them twice.
    this.#pending = []
    this.#pendingBytes = 0
  }

  protected override resetTurn(): void {
    this.#lastInterim = ''
  }

  protected handleMessage(data: Buffer, isBinary: boolean): void {
    if (isBinary) throw new Error('unexpected binary frame')
    const message = JSON.parse(data.toString('utf8')) as Record<string, unknown>
    switch (message.type) {
      case 'Turn':
        return this.#onTurn(message)
      case 'SpeechStarted':
        return this.#startTurn()
      case 'Begin':
      case 'Termination':
        return this.logger.debug({ stream: this.label, message }, `vendor ${String(message.type)}`)
      case 'Error':
        return this.emit({
          type: 'error',
          code: VendorErrorCode.VendorError,
          message: `${this.label}: ${String(message.error ?? 'vendor error')}`,
          fatal: false,
          ...(typeof message.error_code === 'number' ? { vendorCode: message.error_code } : {}),
        })
      default:
        this.logger.debug({ stream: this.label, type: message.type }, 'ignored vendor message')
    }
  }

  #startTurn(): void {
    if (this.#inTurn) return
    this.#inTurn = true
    this.emit({ type: 'speech_started' })
  }

  #onTurn(message: Record<string, unknown>): void {
    const transcript = typeof message.transcript === 'string' ? message.transcript.trim() : ''
    const words = Array.isArray(message.words) ? (message.words as TurnWord[]) : []
    if (message.end_of_turn === true && message.turn_is_formatted === true) {
      this.#inTurn = false
      this.#lastInterim = ''
      const timed = this.inputWords(turnWords(words))
      if (transcript) this.emit({ type: 'final', text: transcript, ...(timed.length > 0 && { words: timed }) })
      this.endTurn(transcript)
      return
    }
    const spoken = words
      .map((word) => (typeof word.text === 'string' ? word.text : ''))
      .filter(Boolean)
      .join(' ')
    const text = message.end_of_turn === true ? transcript : spoken || transcript
    if (!text) return
    this.#startTurn()
    if (text === this.#lastInterim) return
    this.#lastInterim = text
    this.emit({ type: 'interim', text })
  }

  protected override classifyClose(code: number, reason: string): CloseVerdict {
    if (code === 1008 || code === 4001) {
      return { action: 'fatal', code: VendorErrorCode.AuthFailed, message: `vendor refused the session (${code} ${reason})` }
    }
    if (code === 3006 || code === 3007) {
      return { action: 'fatal', code: VendorErrorCode.Rejected, message: `vendor rejected our messages (${code} ${reason})` }
    }
    if (code >= 3000 && code < 5000) return { action: 'retry' }
    return verdictForCloseCode(code, reason)
  }
}

/** Create and start a `stt.vendor_b` stream. */
export function createVendorBSttStream(options: SttVendorBOptions, stream: SttStreamOptions): SttStream {
  return new VendorBSttStream(options, stream).start()
}

/** A `Turn`'s words with their timings (`text`, `start` and `end` in ms of the connection's audio), in seconds. */
function turnWords(words: readonly TurnWord[]): SttWord[] {
  const out: SttWord[] = []
  for (const w of words) {
    if (typeof w.text !== 'string' || typeof w.start !== 'number' || typeof w.end !== 'number') continue
    out.push({ word: w.text, start: w.start / 1000, end: w.end / 1000 })
  }
  return out
}
