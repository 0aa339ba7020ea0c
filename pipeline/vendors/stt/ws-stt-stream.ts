import { AUDIO_FORMATS, type AudioFormat, type AudioFormatInfo, bytesPerSecond } from '../../audio/audio-format.js'
import { AudioRingBuffer } from '../../audio/audio-ring-buffer.js'
import { WsVendorStream, type WsVendorStreamOptions } from '../socket/ws-vendor-stream.js'
import type { SttEvent, SttStream, SttStreamOptions, SttTranscriptEvent, SttWord } from './stt-stream.js'
import { OffsetMap } from './offset-map.js'

/** Default of `transport.sendChunkMs`. */
export const DEFAULT_STT_SEND_CHUNK_MS = 60

/**
 * Shared part of the WebSocket STT adapters: audio buffering while (re)connecting, replay of the current turn after a
 * reconnect (bounded to `replaySeconds`), deferred finalize, and turn bookkeeping. Adapters map the wire only.
 *
 * Audio goes out in messages of `sendChunkMs`: pushes are held until that much is there, a finalize
 * sends what is held before it, and audio that stops mid-message is sent `2 * sendChunkMs` after it began.
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
  /** Pushed audio not on the wire yet (the socket is open), where it starts in the input, and its size. */
  #held: Buffer[] = []
  #heldAt = 0
  #heldBytes = 0
  /** Bytes that make a message; 0 sends every push. */
  readonly #sendBytes: number
  /** Sends held audio that stopped coming before it made a message (armed when holding starts). */
  #heldTimer: NodeJS.Timeout | undefined
  readonly #heldWaitMs: number

  /**
   * `sendChunkDefaultMs`: the adapter's default for `transport.sendChunkMs` (0 for one that puts audio in messages
   * of its own sizes in `sendAudio`).
   */
  protected constructor(
    label: string,
    options: SttStreamOptions,
    keepAliveDefaultMs: number,
    sendChunkDefaultMs = DEFAULT_STT_SEND_CHUNK_MS,
  ) {
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
    const chunkMs = Math.max(0, transport.sendChunkMs ?? sendChunkDefaultMs)
    const frame = this.audio.bytesPerSample
    this.#sendBytes = Math.floor((bytesPerSecond(this.format) * chunkMs) / 1000 / frame) * frame
    this.#heldWaitMs = 2 * chunkMs
  }

  /** Send the vendor's finalize message (Finalize, ForceEndTurn, ForceEndpoint). */
  protected abstract sendFinalize(): void

  /**
   * The socket is open again and the current turn's audio is about to be replayed. `replayCoversTurn` is false when
   * the turn is longer than the replay buffer, so adapters keep what they already accumulated.
   */
  protected resetTurn(_replayCoversTurn: boolean): void {}

  /** The consumer ended the turn itself ({@link turnEnded}): forget what the adapter accumulated of it. */
  protected forgetTurn(): void {}

  /** Put audio on the wire; adapters that must re-chunk override it. */
  protected sendAudio(chunk: Buffer): void {
    this.sendBinary(chunk)
  }

  pushAudio(chunk: Buffer): void {
    if (this.closed || chunk.length === 0) return
    const at = this.#pushed
    this.#pushed += chunk.length
    this.#ring.append(chunk)
    if (!this.isOpen) return
    if (this.#sendBytes === 0 || (this.#heldBytes === 0 && chunk.length >= this.#sendBytes)) {
      this.#onWire(at, chunk.length)
      this.sendAudio(chunk)
      return
    }
    if (this.#heldBytes === 0) {
      this.#heldAt = at
      if (this.#heldTimer === undefined) {
        this.#heldTimer = setTimeout(() => this.#sendHeld(), this.#heldWaitMs)
        this.#heldTimer.unref()
      } else this.#heldTimer.refresh()
    }
    this.#held.push(chunk)
    this.#heldBytes += chunk.length
    // Audio held for the next message is audio flowing: no KeepAlive for that tick (a late loop can stretch the
    // time between two messages past a short keep-alive interval).
    this.markActivity()
    if (this.#heldBytes >= this.#sendBytes) this.#sendHeld()
  }

  /** Puts the held audio on the wire as one message. */
  #sendHeld(): void {
    if (this.#heldBytes === 0) return
    const data = this.#held.length === 1 ? (this.#held[0] as Buffer) : Buffer.concat(this.#held, this.#heldBytes)
    this.#held = []
    this.#heldBytes = 0
    if (!this.isOpen) return
    this.#onWire(this.#heldAt, data.length)
    this.sendAudio(data)
  }

  /** Forgets held audio (a new connection replays it from the ring). */
  #dropHeld(): void {
    this.#held = []
    this.#heldBytes = 0
  }

  #onWire(inputAt: number, length: number): void {
    this.#wire.add(this.#wireBytes, inputAt, length)
    this.#wireBytes += length
  }

  /** Seconds of audio the current connection carried (pushed audio, its replay and filler): the vendor's count. */
  protected get wireSeconds(): number {
    return this.#wireBytes / bytesPerSecond(this.format)
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
    if (this.isOpen) {
      this.#sendHeld()
      this.sendFinalize()
    } else this.#finalizePending = true
  }

  turnEnded(): void {
    if (this.closed) return
    // The turn is over: a reconnect must not replay it, and the adapter's text of it must not reach the next one.
    this.#ring.clear()
    this.forgetTurn()
  }

  /** Sends held audio before the vendor's goodbye, which asks for the transcript of everything sent. */
  override close(): Promise<void> {
    clearTimeout(this.#heldTimer)
    if (!this.closed) this.#sendHeld()
    return super.close()
  }

  protected override onOpen(reconnected: boolean): void {
    // Held audio is the ring's tail: the replay below carries it.
    this.#dropHeld()
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
