import { AUDIO_FORMATS, type AudioFormat, type AudioFormatInfo, bytesPerSecond } from '../audio/audio-format.js'
import { AudioRingBuffer } from '../audio/audio-ring-buffer.js'
import { WsVendorStream, type WsVendorStreamOptions } from '../vendor/ws-vendor-stream.js'
import type { SttEvent, SttStream, SttStreamOptions, SttTranscriptEvent, SttWord } from './stt-stream.js'
import { OffsetMap } from './offset-map.js'

/**
 * Shared part of the WebSocket STT adapters: audio buffering while (re)connecting, replay of the current turn after a
 * reconnect (bounded to `replaySeconds`), deferred finalize, and turn bookkeeping. Adapters map the wire only.
 */
export abstract class WsSttStream extends WsVendorStream<SttTranscriptEvent> implements SttStream {
  protected readonly format: AudioFormat
  /** Codec, rate and sizes of {@link format}, for the adapter's wire mapping. */
  protected readonly audio: Readonly<AudioFormatInfo>
  readonly #ring: AudioRingBuffer
  #finalizePending = false
  /** Bytes pushed so far: the clock of the stream's input. */
  #pushed = 0
  /** Bytes put on the current connection (the vendor's clock), and where they were in the input. */
  #wireBytes = 0
  readonly #wire = new OffsetMap()

  protected constructor(label: string, options: SttStreamOptions, keepAliveDefaultMs: number) {
    const transport = options.transport ?? {}
    const base: WsVendorStreamOptions<SttTranscriptEvent> = {
      ...transport,
      label,
      isDroppable: (event) => event.type === 'interim',
    }
    if (options.signal) base.signal = options.signal
    if (options.logger) base.logger = options.logger
    super(base, keepAliveDefaultMs)
    this.format = options.format
    this.audio = AUDIO_FORMATS[options.format]
    this.#ring = new AudioRingBuffer(Math.round(bytesPerSecond(this.format) * (transport.replaySeconds ?? 5)), this.audio.bytesPerSample)
  }

  /** Send the vendor's finalize message (Finalize, ForceEndTurn, ForceEndpoint). */
  protected abstract sendFinalize(): void

  /**
   * The socket is open again and the current turn's audio is about to be replayed. `replayCoversTurn` is false when
   * the turn is longer than the replay buffer, so adapters keep what they already accumulated.
   */
  protected resetTurn(_replayCoversTurn: boolean): void {}

  /** Put audio on the wire; adapters that must re-chunk override it. */
  protected sendAudio(chunk: Buffer): void {
    this.sendBinary(chunk)
  }

  pushAudio(chunk: Buffer): void {
    if (this.closed || chunk.length === 0) return
    const at = this.#pushed
    this.#pushed += chunk.length
    this.#ring.append(chunk)
    if (this.isOpen) {
      this.#onWire(at, chunk.length)
      this.sendAudio(chunk)
    }
  }

  #onWire(inputAt: number, length: number): void {
    this.#wire.add(this.#wireBytes, inputAt, length)
    this.#wireBytes += length
  }

  /** The adapter put `bytes` of audio of its own on the wire (silence as keep-alive or padding). */
  protected sentFiller(bytes: number): void {
    this.#wireBytes += bytes
  }

  /**
   * Words the vendor timed in seconds of this connection's audio, in seconds of the stream's input instead: the
   * replay after a reconnect and filler silence are taken out. Words before anything known are left out.
   */
  protected inputWords(words: readonly SttWord[]): SttWord[] {
    const perSecond = bytesPerSecond(this.format)
    const out: SttWord[] = []
    for (const w of words) {
      const start = this.#wire.map(w.start * perSecond)
      const end = this.#wire.map(w.end * perSecond)
      if (start === undefined || end === undefined) continue
      out.push({ word: w.word, start: start / perSecond, end: end / perSecond })
    }
    return out
  }

  finalize(): void {
    if (this.closed) return
    if (this.isOpen) this.sendFinalize()
    else this.#finalizePending = true
  }

  protected override onOpen(reconnected: boolean): void {
    if (reconnected) this.resetTurn(!this.#ring.overflowed)
    // A new connection: the vendor's clock starts again at zero, with the replay.
    this.#wire.clear()
    this.#wireBytes = 0
    const replay = this.#ring.snapshot()
    if (replay.length > 0) {
      this.#onWire(this.#pushed - replay.length, replay.length)
      this.sendAudio(replay)
    }
    if (this.#finalizePending) {
      this.#finalizePending = false
      this.sendFinalize()
    }
  }

  /** Yield `end_of_turn` and forget the turn's buffered audio. */
  protected endTurn(text: string): void {
    this.#ring.clear()
    this.emit({ type: 'end_of_turn', text })
  }

  override [Symbol.asyncIterator](): AsyncIterator<SttEvent, undefined> {
    return super[Symbol.asyncIterator]()
  }
}
