/**
 * The gateway side of one carrier media stream: carrier frames become `PipelineInput` calls, pipeline events
 * become carrier frames. Audio stays mu-law 8 kHz both ways (no transcoding). Each assistant audio chunk is
 * followed by a mark named with its chunk id; the echo tells the pipeline what the caller actually heard.
 * Echoes released by a `clear` are not reported (they do not prove playback). The stream has no pause: a paused
 * reply is a `clear`, and its resume sends again what the caller had not heard (`UnheardAudio`), each chunk with a
 * mark of a new name, so that an echo the clear released is never taken for the new one's.
 */
import type { WebSocket } from 'ws'
import type { CarrierMediaCodec, CarrierStartEvent } from '../../carrier/carrier.js'
import type { EndReason } from '../../core/end-reason.js'
import type { SessionPort } from '../../gateway/sessions/ports/session-port.js'
import type { SocketTransport } from '../http/upgrade-session.js'
import type { Log } from '../../core/log.js'
import type { PipelineEvent } from '../../pipeline/index.js'
import { LogLimiter } from './log-limiter.js'
import { UnheardAudio } from './unheard-audio.js'

/** Above this many bytes waiting in the socket, assistant audio is dropped (~40 s of audio as base64 JSON). */
export const MAX_BUFFERED_BYTES = 512 * 1024
/** Most outbound messages held while the carrier has not sent `start` yet. */
export const MAX_PENDING_MESSAGES = 512
/** Largest mu-law payload put in one `media` frame (1 s); longer chunks are split. */
export const MAX_MEDIA_PAYLOAD_BYTES = 8000
/** How long the carrier has to send `start` after the socket opened. */
export const START_TIMEOUT_MS = 10_000

/** Options of a `MediaStreamTransport`. */
export interface MediaStreamTransportOptions {
  readonly codec: CarrierMediaCodec
  readonly log: Log
  /** Called once with the carrier's `start` (call sid check, call status). */
  readonly onStart?: (start: CarrierStartEvent) => void
  readonly maxBufferedBytes?: number
  readonly startTimeoutMs?: number
  /** Measures the synchronous handling of each inbound frame in ms (benchmarks). */
  readonly frameTiming?: ((ms: number) => void) | undefined
}

/** `again`: audio sent a second time, after a pause. */
type Pending = { kind: 'audio'; chunkId: number; audio: Buffer; again?: boolean }

/** Most marks remembered while waiting for their echoes (a carrier that never echoes must not grow memory). */
const MAX_OUTSTANDING_MARKS = 4096

/** `SessionTransport` over a carrier media stream WebSocket. */
export class MediaStreamTransport implements SocketTransport {
  readonly kind = 'carrier' as const
  readonly audio = { input: 'ulaw_8000', output: 'ulaw_8000' } as const
  readonly #codec: CarrierMediaCodec
  readonly #log: Log
  readonly #warn: LogLimiter
  readonly #opts: MediaStreamTransportOptions
  #ws: WebSocket | undefined
  #session: SessionPort | undefined
  #streamSid: string | undefined
  #pending: Pending[] = []
  /** Marks sent and not yet echoed, oldest first (the carrier echoes in order). */
  #marks: string[] = []
  /** Audio written and not yet heard, for a resume after a pause. */
  readonly #unheard = new UnheardAudio(MAX_OUTSTANDING_MARKS)
  /** Paused: assistant audio waits here, in order, for the resume. */
  #held: Pending[] | undefined
  /** Pauses so far: the mark names of audio sent again carry it. */
  #pauses = 0
  #stopped = false
  #startTimer: NodeJS.Timeout | undefined
  /** Frames received, for diagnostics and benchmarks. */
  framesIn = 0
  /** Audio bytes dropped because the socket was backed up. */
  droppedBytes = 0

  constructor(options: MediaStreamTransportOptions) {
    this.#opts = options
    this.#codec = options.codec
    this.#log = options.log
    this.#warn = new LogLimiter(options.log)
  }

  /** The carrier's stream id once `start` arrived. */
  get streamSid(): string | undefined {
    return this.#streamSid
  }

  /** Binds the open socket and its session; from now on frames flow. */
  attach(ws: WebSocket, session: SessionPort): void {
    this.#ws = ws
    this.#session = session
    const timing = this.#opts.frameTiming
    if (timing === undefined) ws.on('message', (data, isBinary) => this.#onMessage(data as Buffer, isBinary))
    else {
      ws.on('message', (data, isBinary) => {
        const t0 = performance.now()
        this.#onMessage(data as Buffer, isBinary)
        timing(performance.now() - t0)
      })
    }
    ws.on('close', () => {
      clearTimeout(this.#startTimer)
      void session.transportClosed(this.#stopped ? 'caller_hangup' : 'client_disconnected')
    })
    this.#startTimer = setTimeout(() => {
      if (this.#streamSid !== undefined) return
      this.#log.warn({ session_id: session.id }, 'carrier media stream sent no start: closing it')
      void session.end('error')
    }, this.#opts.startTimeoutMs ?? START_TIMEOUT_MS)
    this.#startTimer.unref()
  }

  deliver(event: PipelineEvent): void {
    switch (event.type) {
      case 'audio':
        this.#queue({ kind: 'audio', chunkId: event.chunkId, audio: event.audio })
        return
      case 'clear_playback':
        this.#clear()
        return
      case 'pause_playback':
        this.#pause()
        return
      case 'resume_playback':
        this.#resume()
        return
      case 'hangup':
        // The pipeline sends this after the farewell's marks came back: closing the stream ends the call.
        this.#closeSocket(1000, 'hangup')
        void this.#session?.end(event.reason === 'agent_hangup' ? 'hangup' : 'error')
        return
      default:
        // Text, transcripts and turn events have no carrier equivalent.
        return
    }
  }

  /** Raw mu-law audio to the caller outside the pipeline's turns (a warm transfer): no mark, dropped before `start`. */
  play(audio: Buffer): void {
    const ws = this.#ws
    const sid = this.#streamSid
    if (ws === undefined || sid === undefined || ws.readyState !== ws.OPEN) return
    if (ws.bufferedAmount > (this.#opts.maxBufferedBytes ?? MAX_BUFFERED_BYTES)) {
      this.droppedBytes += audio.length
      return
    }
    for (let at = 0; at < audio.length; at += MAX_MEDIA_PAYLOAD_BYTES) {
      ws.send(this.#codec.encodeMedia(sid, audio.subarray(at, at + MAX_MEDIA_PAYLOAD_BYTES)))
    }
  }

  close(reason: EndReason): void {
    clearTimeout(this.#startTimer)
    this.#closeSocket(reason === 'shutdown' ? 1001 : 1000, reason)
  }

  #closeSocket(code: number, reason: string): void {
    const ws = this.#ws
    if (ws === undefined || ws.readyState === ws.CLOSING || ws.readyState === ws.CLOSED) return
    ws.close(code, reason)
  }

  #onMessage(data: Buffer, isBinary: boolean): void {
    this.framesIn++
    const session = this.#session
    if (session === undefined || this.#stopped) return
    if (isBinary) return this.#warn.warn({ session_id: session.id }, 'carrier sent a binary frame: ignored')
    const event = this.#codec.decode(data)
    if (event === null) return
    switch (event.kind) {
      case 'invalid':
        return this.#warn.warn({ session_id: session.id, reason: event.reason, detail: event.detail }, 'malformed carrier frame ignored')
      case 'connected':
        return
      case 'start':
        return this.#onStart(session, event)
      default:
        break
    }
    if (event.streamSid !== this.#streamSid) {
      return this.#warn.warn({ session_id: session.id, event: event.kind }, 'carrier frame for another stream ignored')
    }
    switch (event.kind) {
      case 'media':
        session.input?.pushAudio(event.payload, event.timestamp)
        return
      case 'dtmf':
        session.input?.dtmf(event.digit)
        return
      case 'mark':
        return this.#onMark(session, event.name)
      case 'stop':
        this.#stopped = true
        void session.transportClosed('caller_hangup')
        this.#closeSocket(1000, 'stream stopped')
        return
    }
  }

  #onStart(session: SessionPort, event: CarrierStartEvent): void {
    if (this.#streamSid !== undefined) {
      this.#warn.warn({ session_id: session.id }, 'second carrier start ignored')
      return
    }
    clearTimeout(this.#startTimer)
    this.#streamSid = event.streamSid
    const format = event.mediaFormat
    if (format.encoding !== 'audio/x-mulaw' || format.sampleRate !== 8000 || format.channels !== 1) {
      this.#log.warn(
        { session_id: session.id, media_format: format },
        'carrier announced an unexpected media format; treating it as mu-law 8 kHz',
      )
    }
    this.#opts.onStart?.(event)
    const pending = this.#pending
    this.#pending = []
    if (this.#held !== undefined) this.#held.push(...pending)
    else for (const item of pending) this.#send(item)
  }

  #onMark(session: SessionPort, name: string): void {
    const at = this.#marks.indexOf(name)
    // Unknown names are echoes released by a clear (already forgotten) or not ours: nothing was heard.
    if (at === -1) return
    this.#marks.splice(0, at + 1)
    // Audio sent again after a pause is marked `<chunk id>.<pause>`.
    const chunkId = Number(name.split('.')[0])
    if (!Number.isSafeInteger(chunkId)) return
    this.#unheard.heard(chunkId, performance.now())
    session.input?.markPlayed(chunkId)
  }

  #queue(item: Pending): void {
    if (this.#held !== undefined && this.#streamSid !== undefined) {
      if (this.#held.length < MAX_PENDING_MESSAGES) this.#held.push(item)
      else this.#session?.input?.markPlayed(item.chunkId) // never left waiting for a chunk that was dropped
      return
    }
    if (this.#streamSid !== undefined) return this.#send(item)
    if (this.#pending.length >= MAX_PENDING_MESSAGES) {
      this.droppedBytes += item.audio.length
      this.#warn.warn({ session_id: this.#session?.id }, 'carrier stream not started: assistant audio dropped')
      return
    }
    this.#pending.push(item)
  }

  #send(item: Pending): void {
    const ws = this.#ws
    const sid = this.#streamSid
    if (ws === undefined || sid === undefined || ws.readyState !== ws.OPEN) return
    // The chunk's frames and its mark leave in one socket write, not one each (a system call saved per chunk).
    const socket = socketOf(ws)
    socket?.cork()
    try {
      this.#sendChunk(ws, sid, item)
    } finally {
      socket?.uncork()
    }
  }

  #sendChunk(ws: WebSocket, sid: string, item: Pending): void {
    const name = item.again ? `${item.chunkId}.${this.#pauses}` : String(item.chunkId)
    if (ws.bufferedAmount > (this.#opts.maxBufferedBytes ?? MAX_BUFFERED_BYTES)) {
      // Never grow memory without bound; the mark still goes so the pipeline is not left waiting for it.
      this.droppedBytes += item.audio.length
      this.#warn.warn({ session_id: this.#session?.id, buffered: ws.bufferedAmount }, 'carrier socket backed up: assistant audio dropped')
    } else {
      for (let at = 0; at < item.audio.length; at += MAX_MEDIA_PAYLOAD_BYTES) {
        ws.send(this.#codec.encodeMedia(sid, item.audio.subarray(at, at + MAX_MEDIA_PAYLOAD_BYTES)))
      }
      this.#unheard.written(item.chunkId, item.audio, performance.now())
      if (!item.again) this.#session?.input?.audioWritten(item.chunkId)
    }
    if (this.#marks.length >= MAX_OUTSTANDING_MARKS) this.#marks.shift()
    this.#marks.push(name)
    ws.send(this.#codec.encodeMark(sid, name))
  }

  /**
   * Stops the caller's audio where it is: the carrier's buffer is cleared, and what it held that was not heard waits
   * with the audio still to come. Echoes of chunks that played in full before the clear are lost in it: the last of
   * them is reported heard.
   */
  #pause(): void {
    if (this.#held !== undefined) return
    this.#pauses++
    this.#held = []
    if (this.#streamSid === undefined) return
    const { unplayed, playedThrough } = this.#unheard.takeUnplayed(performance.now())
    this.#held = unplayed.map((c) => ({ kind: 'audio', chunkId: c.chunkId, audio: c.audio, again: true }))
    this.#clearCarrier()
    if (playedThrough !== undefined) this.#session?.input?.markPlayed(playedThrough)
  }

  /** Plays on from the pause: what was not heard, then what came meanwhile. */
  #resume(): void {
    const held = this.#held
    this.#held = undefined
    if (held === undefined) return
    for (const item of held) this.#queue(item)
  }

  #clear(): void {
    this.#held = undefined
    this.#unheard.clear()
    this.#pending = []
    this.#clearCarrier()
  }

  /** Empties the carrier's buffer; the marks it echoes for it prove nothing and are ignored. */
  #clearCarrier(): void {
    this.#marks = []
    const ws = this.#ws
    const sid = this.#streamSid
    if (ws === undefined || sid === undefined || ws.readyState !== ws.OPEN) return
    ws.send(this.#codec.encodeClear(sid))
  }
}

/**
 * The TCP socket under a `ws` WebSocket, to cork it around several messages. `ws` keeps it in `_socket` (so since
 * ws 1.x; every send is written to it); undefined if a later version moves it, and then each message is its own write.
 */
function socketOf(ws: WebSocket): { cork(): void; uncork(): void } | undefined {
  const socket = (ws as unknown as { _socket?: unknown })._socket
  return typeof socket === 'object' && socket !== null && 'cork' in socket && 'uncork' in socket
    ? (socket as { cork(): void; uncork(): void })
    : undefined
}
