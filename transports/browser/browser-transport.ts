import type { RawData, WebSocket } from 'ws'
import type { EndReason } from '../../core/end-reason.js'
import type { SessionPort } from '../../gateway/sessions/ports/session-port.js'
import type { SocketTransport } from '../http/upgrade-session.js'
import { MAX_JSON_DEPTH, jsonNestsDeeperThan, type PipelineEvent } from '../../pipeline/index.js'
import type { Log } from '../../core/log.js'
import { decodeClientFrame, encodeServerEvent, errorMessage, MAX_TEXT_FRAME_BYTES, type BrowserServerMessage } from './browser-codec.js'
import type { BrowserClientMessage, BrowserErrorCode, DecodeResult } from './browser-messages.js'
import { DEFAULT_BROWSER_LIMITS, type BrowserTransportLimits } from './browser-limits.js'
import { TokenBucket } from './token-bucket.js'

/**
 * A frame nested deeper than JSON from outside may be, refused before the codec parses it: client.response.data
 * goes on to the backend through JSON.stringify, which recurses (a 100,000-deep frame overflowed the stack there).
 * Here and not in the codec, which may reach nothing of the pipeline but its types.
 */
function tooDeep(bytes: Buffer, isBinary: boolean): DecodeResult | undefined {
  // Binary and oversized frames have refusals of their own, which the codec gives.
  if (isBinary || bytes.length > MAX_TEXT_FRAME_BYTES || !jsonNestsDeeperThan(bytes)) return undefined
  return { ok: false, error: { code: 'json_too_deep', message: `frame nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays` } }
}

/**
 * The turn id a warm transfer clears its audio with, and the prefix of the turns its audio plays in (`transfer-1`,
 * `transfer-2`, ...): each stretch of it (hold, hold line, bridged human) is an assistant turn announced with
 * `turn.start` and closed with `turn.end`, as the browser SDK expects of any audio it plays.
 */
export const TRANSFER_TURN_ID = 'transfer'

/** Cost floor of one audio frame, so a flood of tiny frames is throttled too. */
const MIN_AUDIO_FRAME_COST_MS = 5
/** PCM16 8 kHz: 16 bytes per millisecond. */
const INPUT_BYTES_PER_MS = 16

/**
 * The browser side of a session: decodes client frames into `PipelineInput` calls and encodes pipeline events
 * into server messages. Bad frames get an `error` message and are dropped; the session goes on. It has its wire
 * formats from construction, so the session starts the pipeline with them.
 */
export class BrowserTransport implements SocketTransport {
  readonly kind = 'browser' as const
  readonly audio = { input: 'pcm_8000', output: 'pcm_16000' } as const
  #ws: WebSocket | undefined
  /** Output goes straight to the socket: attached, and the client said `client.ready` (or did not in time). */
  #flowing = false
  #readyTimer: NodeJS.Timeout | undefined
  #session: SessionPort | undefined
  #closed: EndReason | undefined
  /** Messages held until the client is ready; `chunkId` marks assistant audio. */
  readonly #pending: { text: string; chunkId: number | undefined }[] = []
  #pendingBytes = 0
  readonly #audioBucket: TokenBucket
  readonly #messageBucket: TokenBucket
  readonly #errorBucket: TokenBucket
  #throttling = false
  readonly #dropped = { audioIn: 0, audioOut: 0, errors: 0 }
  /** Audio messages `play()` sent (their delta ids). */
  #transferChunks = 0
  /** The transfer turn `play()` audio goes in now (announced), and how many there were. */
  #transferTurn: string | undefined
  #transferTurns = 0
  /**
   * Paused (`pause_playback`): assistant audio not sent yet waits here for the resume, and its bytes. The browser
   * SDK has no pause: it plays on what it was already sent (TTS runs ahead of real time, so often most of the reply).
   */
  #held: { events: Extract<PipelineEvent, { type: 'audio' }>[]; bytes: number } | undefined
  #log: Log

  readonly #limits: BrowserTransportLimits
  constructor(log: Log, limits: BrowserTransportLimits = DEFAULT_BROWSER_LIMITS, now: () => number = Date.now) {
    this.#limits = limits
    this.#log = log
    this.#audioBucket = new TokenBucket(limits.audioBurstMs, 1, now)
    this.#messageBucket = new TokenBucket(limits.messageBurst, limits.messagesPerSecond / 1000, now)
    this.#errorBucket = new TokenBucket(limits.errorBurst, limits.errorsPerSecond / 1000, now)
  }

  /**
   * Binds the upgraded socket and handles frames until it closes. What was queued (the welcome starts before the
   * socket exists) waits for `client.ready`, so the browser hears the first words, but at most `readyTimeoutMs`.
   */
  attach(ws: WebSocket, session: SessionPort): void {
    this.#ws = ws
    this.#session = session
    this.#log = this.#log.child({ session_id: session.id })
    ws.on('message', (data: RawData, isBinary: boolean) => this.#onFrame(data, isBinary))
    ws.on('close', () => {
      // The browser went away (or the close this transport started completed): the session ends, once.
      void session.transportClosed()
      clearTimeout(this.#readyTimer)
      this.#logDrops()
    })
    if (this.#closed !== undefined) {
      this.#flushAndClose(this.#closed)
      return
    }
    this.#readyTimer = setTimeout(() => {
      this.#log.debug('no client.ready in time: sending output anyway')
      this.#startOutput()
    }, this.#limits.readyTimeoutMs)
    this.#readyTimer.unref()
  }

  /** Sends what was held, in order, and lets later output go straight to the socket. */
  #startOutput(): void {
    clearTimeout(this.#readyTimer)
    if (this.#flowing || this.#ws === undefined) return
    this.#flowing = true
    for (const m of this.#pending.splice(0)) this.#write(m.text, m.chunkId)
    this.#pendingBytes = 0
  }

  deliver(event: PipelineEvent): void {
    if (this.#closed !== undefined) return
    if (this.#hold(event)) return
    // The transfer's audio stopped (its clear) or the pipeline speaks again (a failed transfer's reply): over.
    if (event.type === 'clear_playback' || event.type === 'turn.start') this.#endTransferTurn()
    if (event.type === 'clear_playback') {
      // Browsers stop on the user `turn.start`; only audio not yet handed to the socket can still be dropped.
      this.#dropPendingAudio()
      return
    }
    if (event.type === 'hangup') {
      // Ending the session closes this transport, after everything already sent (ws keeps frame order).
      void this.#session?.end(event.reason === 'agent_hangup' ? 'hangup' : 'error')
      return
    }
    const message = encodeServerEvent(event)
    if (message !== undefined) this.#send(message, event.type === 'audio' ? event.chunkId : undefined)
  }

  /**
   * Raw PCM16 16 kHz to the browser outside the pipeline's turns (a warm transfer's hold line, hold audio and the
   * bridged human): `response.audio` messages ("buffer and play immediately") of a transfer turn, announced by a
   * `turn.start` role assistant before its first audio; playback is not acknowledged. Dropped, and counted, while
   * the browser does not read.
   */
  play(audio: Buffer): void {
    if (this.#closed !== undefined) return
    const ws = this.#ws
    if (this.#flowing && ws !== undefined && ws.bufferedAmount > this.#limits.maxBufferedBytes) {
      this.#dropped.audioOut++
      return
    }
    let turnId = this.#transferTurn
    if (turnId === undefined) {
      this.#transferTurns += 1
      turnId = `${TRANSFER_TURN_ID}-${this.#transferTurns}`
      this.#transferTurn = turnId
      this.#send({ type: 'turn.start', role: 'assistant', turn_id: turnId }, undefined)
    }
    this.#transferChunks += 1
    const delta = `${turnId}:${this.#transferChunks}`
    this.#send({ type: 'response.audio', content: audio.toString('base64'), delta_id: delta, turn_id: turnId }, undefined)
  }

  /**
   * Closes the transfer turn, if one is open; the next `play()` opens another. Also when the visitor types or
   * speaks: the SDK then stops its player and drops the rest of the turn it was playing, so the human's voice
   * goes on in a turn of its own.
   */
  #endTransferTurn(): void {
    const turnId = this.#transferTurn
    if (turnId === undefined) return
    this.#transferTurn = undefined
    this.#send({ type: 'turn.end', role: 'assistant', turn_id: turnId }, undefined)
  }

  close(reason: EndReason): void {
    if (this.#closed !== undefined) return
    this.#endTransferTurn()
    this.#closed = reason
    if (this.#ws !== undefined) this.#flushAndClose(reason)
  }

  /** A session that ends before the client said it was ready still sends what it had (a farewell), then closes. */
  #flushAndClose(reason: EndReason): void {
    this.#startOutput()
    // 1000 for a normal end, 1001 when the gateway goes away; the reason says which timeout or hangup.
    this.#ws?.close(reason === 'shutdown' ? 1001 : 1000, reason)
  }

  #onFrame(data: RawData, isBinary: boolean): void {
    if (this.#closed !== undefined) return
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data)
    const decoded = tooDeep(bytes, isBinary) ?? decodeClientFrame(bytes, isBinary)
    if (decoded.ok && decoded.message.type === 'client.audio') {
      this.#onAudio(decoded.message.audio)
      return
    }
    if (!this.#messageBucket.take(1)) {
      this.#sendError('rate_limited', `more than ${this.#limits.messagesPerSecond} messages per second: message dropped`)
      return
    }
    if (!decoded.ok) {
      this.#log.debug({ code: decoded.error.code }, 'browser frame refused')
      this.#sendError(decoded.error.code, decoded.error.message)
      return
    }
    this.#dispatch(decoded.message)
  }

  #onAudio(audio: Buffer): void {
    if (audio.length === 0) return
    const costMs = Math.max(MIN_AUDIO_FRAME_COST_MS, audio.length / INPUT_BYTES_PER_MS)
    // One notice per episode: the episode ends once the bucket refilled (the client kept under real time).
    if (this.#throttling && this.#audioBucket.full) this.#throttling = false
    if (!this.#audioBucket.take(costMs)) {
      this.#dropped.audioIn++
      if (!this.#throttling) {
        this.#throttling = true
        this.#log.warn('browser audio faster than real time: dropping audio')
        this.#sendError(
          'audio_throttled',
          `audio arrives faster than real time (more than ${this.#limits.audioBurstMs} ms ahead): audio is dropped until the client slows down`,
        )
      }
      return
    }
    this.#session?.input?.pushAudio(audio)
  }

  #dispatch(m: BrowserClientMessage): void {
    const input = this.#session?.input
    switch (m.type) {
      case 'client.ready':
        this.#log.debug('browser client ready')
        this.#startOutput()
        return
      case 'client.audio':
        this.#onAudio(m.audio)
        return
      case 'vad_events':
        if (m.event === 'vad_start') this.#endTransferTurn()
        input?.clientVad(m.event)
        return
      case 'trigger.response.audio.replay_finished':
        input?.replayFinished(m.turnId)
        return
      case 'trigger.turn.start':
        this.#endTransferTurn()
        input?.pushToTalk(true)
        return
      case 'trigger.turn.end':
        input?.pushToTalk(false)
        return
      case 'client.response.text':
        this.#endTransferTurn()
        if (m.content.trim().length > 0) input?.userText(m.content)
        return
      case 'client.response.data':
        input?.userData(m.data)
        return
    }
  }

  #sendError(code: BrowserErrorCode, message: string): void {
    if (!this.#errorBucket.take(1)) {
      this.#dropped.errors++
      return
    }
    this.#send(errorMessage(code, message), undefined)
  }

  /** Sends a message now or, before the client is ready, holds it; `chunkId` when it is assistant audio. */
  #send(message: BrowserServerMessage, chunkId: number | undefined): void {
    const audio = chunkId !== undefined
    const text = JSON.stringify(message)
    if (!this.#flowing) {
      if (this.#pendingBytes + text.length > this.#limits.maxPendingBytes) {
        if (this.#ws !== undefined) {
          // The wait for client.ready is bounded in bytes too: a full queue is sent anyway.
          this.#startOutput()
          this.#write(text, chunkId)
          return
        }
        if (audio) {
          this.#dropped.audioOut++
          return
        }
      }
      this.#pending.push({ text, chunkId })
      this.#pendingBytes += text.length
      return
    }
    this.#write(text, chunkId)
  }

  #write(text: string, chunkId: number | undefined): void {
    const ws = this.#ws
    if (ws === undefined || ws.readyState !== ws.OPEN) return
    if (chunkId !== undefined && ws.bufferedAmount > this.#limits.maxBufferedBytes) {
      if (this.#dropped.audioOut++ === 0) this.#log.warn({ buffered: ws.bufferedAmount }, 'browser not reading: dropping assistant audio')
      return
    }
    ws.send(text)
    if (chunkId !== undefined) this.#session?.input?.audioWritten(chunkId)
  }

  /** Pause and resume: true when `event` was handled here (held audio, or the pause itself). */
  #hold(event: PipelineEvent): boolean {
    if (event.type === 'pause_playback') {
      this.#held ??= { events: [], bytes: 0 }
      return true
    }
    const held = this.#held
    if (event.type === 'resume_playback' || event.type === 'clear_playback') this.#held = undefined
    if (event.type === 'resume_playback') {
      for (const e of held?.events ?? []) this.deliver(e)
      return true
    }
    if (event.type !== 'audio' || held === undefined) return false
    if (held.bytes + event.audio.length > this.#limits.maxPendingBytes) this.#dropped.audioOut++
    else {
      held.events.push(event)
      held.bytes += event.audio.length
    }
    return true
  }

  #dropPendingAudio(): void {
    if (this.#pending.length === 0) return
    const kept = this.#pending.filter((m) => m.chunkId === undefined)
    this.#pending.splice(0, this.#pending.length, ...kept)
    this.#pendingBytes = kept.reduce((n, m) => n + m.text.length, 0)
  }

  #logDrops(): void {
    const d = this.#dropped
    if (d.audioIn + d.audioOut + d.errors > 0) {
      this.#log.info(
        { audio_in_dropped: d.audioIn, audio_out_dropped: d.audioOut, errors_suppressed: d.errors },
        'browser connection had drops',
      )
    }
  }
}
