import { AudioPlayer } from './audio-player.js'
import {
  parseServerMessage,
  type Authorization,
  type AuthorizeRequest,
  type ClientMessage,
  type FrontendConfig,
  type ServerMessage,
} from './messages.js'
import { MicCapture } from './mic-capture.js'
import { base64ToFloat, int16ToBase64 } from './pcm16.js'
import { UserTranscriptAssembler, type UserTranscript } from './transcript.js'

export type { Authorization, AuthorizeRequest, ClientMessage, FrontendConfig, ServerMessage } from './messages.js'
export type { UserTranscript } from './transcript.js'

/** SDK version sent to the customer's authorize endpoint. */
export const SDK_VERSION = '0.1.0'

/** Sample rate of `response.audio`. */
const PLAYBACK_RATE = 16_000
/** Above this many unsent bytes on the socket, microphone chunks are dropped rather than queued. */
const MAX_BUFFERED_BYTES = 256 * 1024

/** Connection status reported to `onStatus`. */
export type VoxgateStatus = 'authorized' | 'connected' | 'disconnected'

/** An error from the gateway (`error` message) or from the SDK itself (`client_*` codes). */
export interface VoxgateError {
  code: string
  message: string
  /** The server message, for gateway errors. */
  raw?: unknown
}

/** Assistant text of a turn: accumulated deltas, then the complete text (`final`). */
export interface AssistantText {
  turnId: string
  text: string
  final: boolean
}

/** Callbacks; all optional. */
export interface VoxgateHandlers {
  onStatus?(status: VoxgateStatus, detail?: { code?: number; reason?: string }): void
  onTranscript?(transcript: UserTranscript): void
  onAssistantText?(text: AssistantText): void
  onData?(content: unknown, turnId: string): void
  /** Milliseconds of assistant audio actually played (per finished or interrupted chunk). */
  onAudioPlayed?(ms: number): void
  onError?(error: VoxgateError): void
  /** Microphone level (RMS, 0..1) about every 100 ms while the mic streams. */
  onLevel?(level: number): void
  /** Every server message, including types the SDK does not interpret. */
  onMessage?(message: ServerMessage): void
}

/** Options of {@link VoxgateClient.connect}. */
export interface ConnectOptions {
  /**
   * Calls the customer's backend, which calls authorize_session with its API key (never from the browser) and
   * returns the result. Receives the conversation to continue on reconnect.
   */
  authorize: (request: AuthorizeRequest) => Promise<Authorization>
  /** Gateway WebSocket base, e.g. `wss://voice.example.com`. */
  wsUrl: string
  /** Session metadata forwarded to the authorize function. */
  metadata?: Record<string, unknown>
  /** Capture the microphone (default true); false for text-only sessions. */
  microphone?: boolean
  /** Extra getUserMedia audio constraints (e.g. a deviceId). */
  audioConstraints?: MediaTrackConstraints
}

/**
 * Browser client of the voxgate web WebSocket: authorizes through the customer's backend, streams the microphone
 * as 8 kHz PCM16, plays the assistant's 16 kHz PCM16 gaplessly, and assembles transcripts. The server's VAD decides
 * turns; the client stops playback when the server starts a user turn (barge-in).
 */
export class VoxgateClient {
  readonly #handlers: VoxgateHandlers
  readonly #assistant = new Map<string, string>()
  #transcripts = new UserTranscriptAssembler()
  #options: ConnectOptions | undefined
  #conversationId: string | undefined
  #config: FrontendConfig = {}
  #socket: WebSocket | undefined
  #context: AudioContext | undefined
  #mic: MicCapture | undefined
  #player: AudioPlayer | undefined
  #ready = false
  #userTurnOpen = false
  #muted = false

  constructor(handlers: VoxgateHandlers = {}) {
    this.#handlers = handlers
  }

  /** The conversation of the current (or last) session; reused by {@link reconnect}. */
  get conversationId(): string | undefined {
    return this.#conversationId
  }

  /** Frontend settings of the current session. */
  get config(): FrontendConfig {
    return this.#config
  }

  /** True when turns are driven by {@link startTurn} / {@link endTurn}. */
  get pushToTalk(): boolean {
    return this.#config.transcription?.trigger === 'push_to_talk'
  }

  /** True while the socket is open and `client.ready` was sent. */
  get connected(): boolean {
    return this.#ready
  }

  /**
   * Authorize, open the WebSocket, send `client.ready` and start the microphone. Call it from a user gesture so the
   * AudioContext may play. Resolves once connected; rejects when authorization or the socket fails.
   */
  async connect(options: ConnectOptions): Promise<void> {
    if (this.#options && this.#options !== options) this.#conversationId = undefined
    this.#options = options
    this.#closeSocket()
    const request: AuthorizeRequest = { sdk_version: SDK_VERSION }
    if (this.#conversationId !== undefined) request.conversation_id = this.#conversationId
    if (options.metadata !== undefined) request.metadata = options.metadata
    let auth: Authorization
    try {
      auth = await options.authorize(request)
    } catch (error) {
      this.#error('client_authorize_failed', `authorization failed: ${describe(error)}`)
      throw error
    }
    this.#conversationId = auth.conversation_id
    this.#config = auth.config ?? {}
    this.#emitStatus('authorized')
    this.#context ??= new AudioContext()
    if (this.#context.state === 'suspended') void this.#context.resume()
    this.#player ??= new AudioPlayer(this.#context, {
      onDrain: (turnId) => this.#send({ type: 'trigger.response.audio.replay_finished', reason: 'completed', turn_id: turnId }),
      onPlayed: (ms) => this.#handlers.onAudioPlayed?.(ms),
    })
    await this.#openSocket(options.wsUrl, auth.client_session_key)
    if (options.microphone !== false) await this.#startMic(options.audioConstraints)
  }

  /** Re-authorize with the cached conversation_id and open a new socket: the same conversation continues. */
  async reconnect(): Promise<void> {
    if (this.#options === undefined) throw new Error('connect() first')
    await this.connect(this.#options)
  }

  /** Close the socket and release the microphone and audio. Idempotent. */
  async disconnect(): Promise<void> {
    this.#closeSocket()
    this.#mic?.stop()
    this.#mic = undefined
    this.#player?.stop()
    this.#player = undefined
    const context = this.#context
    this.#context = undefined
    if (context && context.state !== 'closed') await context.close()
  }

  /** Push-to-talk pressed: interrupts playback and streams the microphone until {@link endTurn}. */
  startTurn(): void {
    if (!this.#ready || this.#userTurnOpen) return
    this.#userTurnOpen = true
    this.#interruptPlayback()
    this.#mic?.reset()
    this.#send({ type: 'trigger.turn.start', role: 'user' })
  }

  /** Push-to-talk released: sends the buffered audio, then `trigger.turn.end`. */
  endTurn(): void {
    if (!this.#userTurnOpen) return
    this.#mic?.flush()
    this.#userTurnOpen = false
    this.#send({ type: 'trigger.turn.end', role: 'user' })
  }

  /** Stop (true) or resume (false) sending microphone audio without releasing the device. */
  setMuted(muted: boolean): void {
    this.#muted = muted
  }

  /** Send typed text as the user's message; blank text is not sent. */
  sendText(text: string): void {
    if (text.trim().length === 0) return
    this.#send({ type: 'client.response.text', content: text })
  }

  /** Send a JSON value to the customer's backend (`data` webhook event). */
  sendData(value: unknown): void {
    this.#send({ type: 'client.response.data', data: value })
  }

  #openSocket(wsUrl: string, key: string): Promise<void> {
    const url = `${wsUrl.replace(/\/+$/, '')}/v1/agents/web/websocket?client_session_key=${encodeURIComponent(key)}`
    const socket = new WebSocket(url)
    this.#socket = socket
    return new Promise((resolve, reject) => {
      let opened = false
      socket.onopen = () => {
        opened = true
        this.#ready = true
        this.#send({ type: 'client.ready' })
        this.#emitStatus('connected')
        resolve()
      }
      socket.onmessage = (event: MessageEvent) => {
        if (typeof event.data !== 'string') return
        const message = parseServerMessage(event.data)
        if (message) this.#onMessage(message)
      }
      socket.onerror = () => {
        if (!opened) this.#error('client_socket_failed', 'the WebSocket could not be opened')
      }
      socket.onclose = (event: CloseEvent) => {
        if (this.#socket !== socket) return
        this.#socket = undefined
        this.#ready = false
        this.#userTurnOpen = false
        this.#player?.stop()
        this.#emitStatus('disconnected', { code: event.code, reason: event.reason })
        if (!opened) reject(new Error(`WebSocket closed before opening (${event.code} ${event.reason})`.trim()))
      }
    })
  }

  #closeSocket(): void {
    const socket = this.#socket
    if (!socket) return
    this.#socket = undefined
    this.#ready = false
    this.#userTurnOpen = false
    socket.onopen = socket.onmessage = socket.onerror = socket.onclose = null
    socket.close(1000, 'client disconnect')
    this.#player?.stop()
    this.#emitStatus('disconnected', { code: 1000, reason: 'client disconnect' })
  }

  async #startMic(constraints: MediaTrackConstraints | undefined): Promise<void> {
    if (this.#mic || !this.#context) return
    const mic = new MicCapture(this.#context, {
      onChunk: (samples) => this.#onMicChunk(samples),
      onLevel: (level) => this.#handlers.onLevel?.(level),
    })
    try {
      await mic.start(constraints)
      this.#mic = mic
    } catch (error) {
      mic.stop()
      // Text still works without a microphone, so this is reported, not thrown.
      this.#error('client_microphone_unavailable', `microphone unavailable: ${describe(error)}`)
    }
  }

  #onMicChunk(samples: Int16Array): void {
    if (!this.#ready || this.#muted) return
    if (this.pushToTalk && !this.#userTurnOpen) return
    if ((this.#socket?.bufferedAmount ?? 0) > MAX_BUFFERED_BYTES) return
    this.#send({ type: 'client.audio', content: int16ToBase64(samples) })
  }

  #onMessage(message: ServerMessage): void {
    this.#handlers.onMessage?.(message)
    switch (message.type) {
      case 'turn.start':
        if (message.role === 'user') this.#interruptPlayback()
        break
      case 'response.audio':
        if (this.#context?.state === 'suspended') void this.#context.resume()
        this.#player?.enqueue(base64ToFloat(message.content), PLAYBACK_RATE, message.turn_id)
        break
      case 'response.text.delta': {
        const text = (this.#assistant.get(message.turn_id) ?? '') + message.content
        this.#setAssistant(message.turn_id, text, false)
        break
      }
      case 'response.text':
        this.#setAssistant(message.turn_id, message.content, true)
        break
      case 'user.transcript.interim_delta':
        this.#handlers.onTranscript?.(this.#transcripts.interim(message.turn_id, message.delta_counter, message.content))
        break
      case 'user.transcript.delta':
        this.#handlers.onTranscript?.(this.#transcripts.delta(message.turn_id, message.delta_counter, message.content))
        break
      case 'user.transcript':
        this.#handlers.onTranscript?.(this.#transcripts.final(message.turn_id, message.content))
        break
      case 'response.data':
        this.#handlers.onData?.(message.content, message.turn_id)
        break
      case 'error':
        this.#handlers.onError?.({
          code: message.code ?? message.error ?? 'error',
          message: message.message ?? message.error ?? 'gateway error',
          raw: message,
        })
        break
      default:
        break
    }
  }

  /** Barge-in: silence the assistant now. A push-to-talk client reports the halted playback as finished. */
  #interruptPlayback(): void {
    const turnId = this.#player?.stop()
    if (turnId !== undefined && this.pushToTalk) {
      this.#send({ type: 'trigger.response.audio.replay_finished', reason: 'completed', turn_id: turnId })
    }
  }

  #setAssistant(turnId: string, text: string, final: boolean): void {
    this.#assistant.set(turnId, text)
    while (this.#assistant.size > 20) {
      const oldest = this.#assistant.keys().next().value
      if (oldest === undefined) break
      this.#assistant.delete(oldest)
    }
    this.#handlers.onAssistantText?.({ turnId, text, final })
  }

  #send(message: ClientMessage): void {
    const socket = this.#socket
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message))
  }

  #emitStatus(status: VoxgateStatus, detail?: { code?: number; reason?: string }): void {
    this.#handlers.onStatus?.(status, detail)
  }

  #error(code: string, message: string): void {
    this.#handlers.onError?.({ code, message })
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
