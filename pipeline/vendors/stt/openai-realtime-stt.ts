import { decodeMulaw } from '../../audio/g711-mulaw.js'
import { bufferToInt16, int16ToBuffer } from '../../audio/pcm16.js'
import { Resampler } from '../../audio/resampler.js'
import { type SttOpenAiCompatibleOptions, transcriptionPrompt } from '../../options/openai-compatible-options.js'
import { VendorErrorCode } from '../socket/vendor-errors.js'
import type { VendorConnectRequest } from '../socket/vendor-transport.js'
import { webSocketBase } from '../socket/ws-url.js'
import type { SttStreamOptions } from './stt-stream.js'
import { WsSttStream } from './ws-stt-stream.js'

/** OpenAI's Realtime API takes `audio/pcm` at 24 kHz only; vLLM's `/v1/realtime` takes PCM16 at 16 kHz. */
const OPENAI_PCM_RATE = 24000
const VLLM_PCM_RATE = 16000

/**
 * `stt.openai_compatible` in `realtime` mode: one WebSocket per call to `{base}/realtime`, the gateway's VAD deciding
 * the turns.
 *
 * `realtime_flavor: "openai"` (OpenAI's Realtime transcription session): `session.update` with `session.type:
 * "transcription"`, `audio.input.format` `audio/pcmu` for phone audio (sent as it came) or `audio/pcm` at 24 kHz,
 * `audio.input.transcription` {model, language, prompt} and `audio.input.turn_detection: null`; audio as base64
 * `input_audio_buffer.append`; `input_audio_buffer.commit` at the end of speech. Server events:
 * `conversation.item.input_audio_transcription.delta` -> `interim` (the item's text so far), `.completed` ->
 * `final` + `end_of_turn`, `.failed` and `error` -> `error` (the turn ends empty).
 *
 * `realtime_flavor: "vllm"` (vLLM's `/v1/realtime`): `session.update` {model}, then `input_audio_buffer.commit` to
 * start an utterance, base64 PCM16 16 kHz `input_audio_buffer.append`, `input_audio_buffer.commit` {final: true} at
 * the end of speech; `transcription.delta` -> `interim`, `transcription.done` -> `final` + `end_of_turn`, after which
 * the next utterance is started the same way. A socket that closes while a turn awaits its text is a `stt_turn_lost`
 * error and an empty end of turn; the stream reconnects.
 */
export class OpenAiRealtimeSttStream extends WsSttStream {
  readonly #o: SttOpenAiCompatibleOptions
  readonly #endpoint: SttStreamOptions['endpoint']
  readonly #vllm: boolean
  /** Caller PCM (8 kHz) to the rate the server takes; undefined for mu-law sent as it is. */
  readonly #resampler: Resampler | undefined
  #text = ''
  /** A commit was sent and its transcription has not come. */
  #awaiting = false
  /** Audio bytes appended since the last commit. */
  #appended = 0

  constructor(options: SttOpenAiCompatibleOptions, stream: SttStreamOptions) {
    super('stt.openai_compatible', stream, 0)
    this.#o = options
    this.#endpoint = stream.endpoint
    this.#vllm = options.realtime_flavor === 'vllm'
    const passThrough = !this.#vllm && this.audio.codec === 'ulaw'
    const to = this.#vllm ? VLLM_PCM_RATE : OPENAI_PCM_RATE
    this.#resampler = passThrough || this.audio.sampleRate === to ? undefined : new Resampler({ from: this.audio.sampleRate, to })
  }

  protected connectRequest(): VendorConnectRequest {
    const base = webSocketBase(this.#endpoint.url)
    const headers: Record<string, string> = {}
    if (this.#endpoint.apiKey !== '') headers.Authorization = `Bearer ${this.#endpoint.apiKey}`
    return { url: this.#vllm ? `${base}/realtime` : `${base}/realtime?intent=transcription`, headers }
  }

  protected override onOpen(reconnected: boolean): void {
    this.#resampler?.reset()
    this.sendJson(this.#sessionUpdate())
    if (this.#vllm) this.sendJson({ type: 'input_audio_buffer.commit' })
    super.onOpen(reconnected)
  }

  #sessionUpdate(): object {
    const o = this.#o
    if (this.#vllm) return { type: 'session.update', model: o.model, ...(o.language !== undefined && { language: o.language }) }
    const prompt = transcriptionPrompt(o)
    const format =
      this.#resampler === undefined && this.audio.codec === 'ulaw' ? { type: 'audio/pcmu' } : { type: 'audio/pcm', rate: OPENAI_PCM_RATE }
    return {
      type: 'session.update',
      session: {
        type: 'transcription',
        audio: {
          input: {
            format,
            transcription: {
              model: o.model,
              ...(o.language !== undefined && { language: o.language }),
              ...(prompt !== undefined && { prompt }),
            },
            turn_detection: null,
          },
        },
      },
    }
  }

  protected override sendAudio(chunk: Buffer): void {
    let bytes = chunk
    if (this.#resampler !== undefined) {
      const pcm = this.audio.codec === 'ulaw' ? decodeMulaw(chunk) : bufferToInt16(chunk)
      bytes = int16ToBuffer(this.#resampler.processInt16(pcm))
    }
    this.#append(bytes)
  }

  #append(bytes: Buffer): void {
    if (bytes.length === 0) return
    this.#appended += bytes.length
    this.sendJson({ type: 'input_audio_buffer.append', audio: bytes.toString('base64') })
  }

  protected sendFinalize(): void {
    // The resampler's lookahead holds the last few ms of the turn: they go before the commit.
    if (this.#resampler !== undefined) this.#append(int16ToBuffer(this.#resampler.flushInt16()))
    if (this.#appended === 0) {
      // Nothing was said since the last commit (a push-to-talk tap): OpenAI refuses an empty commit.
      this.endTurn('')
      return
    }
    this.#appended = 0
    this.#awaiting = true
    this.sendJson(this.#vllm ? { type: 'input_audio_buffer.commit', final: true } : { type: 'input_audio_buffer.commit' })
  }

  protected sendGoodbye(): void {
    // Neither protocol has a goodbye message: the socket is closed from here.
    this.closeSocket()
  }

  protected handleMessage(data: Buffer, isBinary: boolean): void {
    if (isBinary) throw new Error('unexpected binary frame')
    const m = JSON.parse(data.toString('utf8')) as Record<string, unknown>
    switch (m.type) {
      case 'conversation.item.input_audio_transcription.delta':
      case 'transcription.delta':
        if (typeof m.delta === 'string' && m.delta !== '') {
          this.#text += m.delta
          this.emit({ type: 'interim', text: this.#text.trim() })
        }
        return
      case 'conversation.item.input_audio_transcription.completed':
        return this.#done(typeof m.transcript === 'string' ? m.transcript : this.#text)
      case 'transcription.done':
        this.#done(typeof m.text === 'string' ? m.text : this.#text)
        // vLLM ends the utterance with its final commit: the next one starts now.
        this.sendJson({ type: 'input_audio_buffer.commit' })
        return
      case 'conversation.item.input_audio_transcription.failed':
        return this.#failed(String((m.error as { message?: unknown } | undefined)?.message ?? 'transcription failed'))
      case 'error': {
        const e = m.error as { message?: unknown; code?: unknown } | string | undefined
        const message = typeof e === 'string' ? e : String(e?.message ?? 'vendor error')
        const turnFailed = this.#awaiting
        this.emit({
          type: 'error',
          code: VendorErrorCode.VendorError,
          message: `${this.label}: ${message}`,
          fatal: false,
          ...(turnFailed && { turnFailed }),
        })
        if (turnFailed) this.#finishTurn('')
        return
      }
      default:
        this.logger.debug({ stream: this.label, type: m.type }, 'vendor event')
    }
  }

  #done(transcript: string): void {
    const text = transcript.trim()
    if (text !== '') this.emit({ type: 'final', text })
    else
      this.emit({
        type: 'error',
        code: VendorErrorCode.EmptyTranscript,
        message: `${this.label}: the server returned no text`,
        fatal: false,
      })
    this.#finishTurn(text)
  }

  #failed(message: string): void {
    this.emit({ type: 'error', code: VendorErrorCode.VendorError, message: `${this.label}: ${message}`, fatal: false, turnFailed: true })
    this.#finishTurn('')
  }

  #finishTurn(text: string): void {
    this.#text = ''
    this.#awaiting = false
    this.endTurn(text)
  }

  protected override onDisconnect(): void {
    this.#appended = 0
    if (!this.#awaiting) return
    this.emit({
      type: 'error',
      code: VendorErrorCode.TurnLost,
      message: `${this.label}: the socket closed before the turn's text came`,
      fatal: false,
      turnFailed: true,
    })
    this.#finishTurn('')
  }

  protected override forgetTurn(): void {
    this.#text = ''
    this.#awaiting = false
  }

  protected override resetTurn(): void {
    this.#text = ''
  }
}
