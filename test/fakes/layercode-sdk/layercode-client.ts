/**
 * The published browser SDK's message handling, ported line for line to Node so a protocol test can run it
 * against a real gateway: `@layercode/js-sdk` 2.8.10 (npm `latest`), `dist/layercode-js-sdk.esm.js`, class
 * `LayercodeClient` (`_handleWebSocketMessage`, `_clientResponseAudioReplayFinished`, `_clientInterruptAgentReplay`,
 * `sendClientResponseText`, `triggerUserTurnStarted`, `_sendReadyIfNeeded`) and its `WavStreamPlayer`
 * (`add16BitPCM`, `interrupt`, the stream worklet's `stop`). What it keeps of the browser is the player's timing:
 * audio plays in real time from the moment it arrives, and the player reports `stop` when its buffer runs dry or
 * it is interrupted; each `stop` sends `trigger.response.audio.replay_finished` without a `turn_id`, as the SDK
 * does. The microphone and the VAD model are left out: a test sends `client.audio` and `vad_events` itself.
 * The SDK source was read as published (npm `@layercode/js-sdk` 2.8.10), as read 2026-11-29.
 */
import WebSocket from 'ws'

/** 16-bit PCM at 16 kHz: 32 bytes per millisecond (the SDK's player runs at 16,000 Hz). */
const BYTES_PER_MS = 32
/** The stream worklet notices a drain or an interrupt on its next render quantum: 128 samples at 16 kHz. */
const QUANTUM_MS = 8

/** One stretch of audio the player played, for a test to check what the listener heard. */
export interface PlayedSpan {
  trackId: string
  startedAt: number
  endedAt: number
  /** True when an interrupt cut it before its end. */
  cut: boolean
}

/**
 * The SDK's `WavStreamPlayer` as a clock: `add16BitPCM` queues audio behind what is playing (or starts a
 * stream); a track that was interrupted takes no more audio (`interruptedTrackIds`); `interrupt` stops the
 * stream and, like the worklet, reports `stop` on the next quantum; a buffer that runs dry reports `stop` too.
 */
export class WavStreamPlayerModel {
  #stream: { endsAt: number; timer: NodeJS.Timeout; trackId: string; spans: PlayedSpan[] } | undefined
  readonly interruptedTrackIds = new Set<string>()
  readonly played: PlayedSpan[] = []

  constructor(readonly finishedPlayingCallback: () => void) {}

  add16BitPCM(bytes: number, trackId: string): boolean {
    if (this.interruptedTrackIds.has(trackId)) return false
    const now = Date.now()
    const ms = bytes / BYTES_PER_MS
    if (this.#stream === undefined) {
      this.#stream = { endsAt: now, timer: setTimeout(() => undefined, 0), trackId, spans: [] }
    }
    const s = this.#stream
    const span = { trackId, startedAt: Math.max(now, s.endsAt), endedAt: Math.max(now, s.endsAt) + ms, cut: false }
    s.spans.push(span)
    this.played.push(span)
    s.endsAt = span.endedAt
    s.trackId = trackId
    clearTimeout(s.timer)
    s.timer = setTimeout(() => this.#stop(), s.endsAt - now + QUANTUM_MS)
    return true
  }

  /** `interrupt()`: the track being written is marked interrupted and the stream stops; null without a stream. */
  async interrupt(): Promise<{ trackId: string } | null> {
    const s = this.#stream
    if (s === undefined) return null
    this.interruptedTrackIds.add(s.trackId)
    const now = Date.now()
    for (const span of s.spans) {
      if (span.endedAt > now) {
        span.cut = true
        span.endedAt = Math.max(span.startedAt, now)
      }
    }
    clearTimeout(s.timer)
    s.timer = setTimeout(() => this.#stop(), QUANTUM_MS)
    return { trackId: s.trackId }
  }

  clearInterruptedTracks(keep: string[]): void {
    for (const id of [...this.interruptedTrackIds]) if (!keep.includes(id)) this.interruptedTrackIds.delete(id)
  }

  get playing(): boolean {
    return this.#stream !== undefined
  }

  #stop(): void {
    if (this.#stream === undefined) return
    this.#stream = undefined
    this.finishedPlayingCallback()
  }

  /** `stop()` and `disconnect()`, as the SDK's disconnect cleanup does when the socket closes: the rest is cut. */
  disconnect(): void {
    const s = this.#stream
    if (s === undefined) return
    clearTimeout(s.timer)
    const now = Date.now()
    for (const span of s.spans) {
      if (span.endedAt > now) {
        span.cut = true
        span.endedAt = Math.max(span.startedAt, now)
      }
    }
    this.#stream = undefined
  }
}

/** The SDK's client with `audioInput: false` (no microphone; `client.ready` on open) and audio output on. */
export class LayercodeClientModel {
  readonly ws: WebSocket
  readonly wavPlayer = new WavStreamPlayerModel(() => this._clientResponseAudioReplayFinished())
  /** Every server message with its arrival time, and every message the client sent. */
  readonly received: { at: number; m: any }[] = []
  readonly sent: { at: number; m: any }[] = []
  pushToTalkEnabled = false
  pushToTalkActive = false
  agentIsSpeaking = false
  userIsSpeaking = false
  currentTurnId: string | null = null
  readySent = false
  readonly #waiters = new Set<() => void>()

  constructor(url: string) {
    this.ws = new WebSocket(url)
    this.ws.on('message', (d) => void this._handleWebSocketMessage(d.toString()))
    // ws.onclose: `_performDisconnectCleanup()` stops and disconnects the player.
    this.ws.on('close', () => this.wavPlayer.disconnect())
    // ws.onopen: `_sendReadyIfNeeded()`; with audioInput false the client is ready at once.
    this.ws.once('open', () => this._sendReadyIfNeeded())
  }

  opened(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.ws.readyState === WebSocket.OPEN) resolve()
      this.ws.once('open', () => resolve())
      this.ws.once('error', reject)
    })
  }

  _sendReadyIfNeeded(): void {
    if (this.ws.readyState === WebSocket.OPEN && !this.readySent) {
      this._wsSend({ type: 'client.ready' })
      this.readySent = true
    }
  }

  _wsSend(message: Record<string, unknown>): void {
    if (this.ws.readyState === WebSocket.OPEN) {
      this.sent.push({ at: Date.now(), m: message })
      this.ws.send(JSON.stringify(message))
    }
  }

  _clientResponseAudioReplayFinished(): void {
    this.agentIsSpeaking = false
    this._wsSend({ type: 'trigger.response.audio.replay_finished', reason: 'completed' })
  }

  async _clientInterruptAgentReplay(): Promise<void> {
    await this.wavPlayer.interrupt()
    this.agentIsSpeaking = false
  }

  async triggerUserTurnStarted(): Promise<void> {
    if (!this.pushToTalkActive) {
      this.pushToTalkActive = true
      this.userIsSpeaking = true
      this._wsSend({ type: 'trigger.turn.start', role: 'user' })
      await this._clientInterruptAgentReplay()
    }
  }

  /** `sendClientResponseText`: the SDK stops its own playback first, then sends the text. */
  async sendClientResponseText(text: string): Promise<void> {
    await this._clientInterruptAgentReplay()
    this._wsSend({ type: 'client.response.text', content: text })
  }

  async _handleWebSocketMessage(data: string): Promise<void> {
    const message = JSON.parse(data)
    this.received.push({ at: Date.now(), m: message })
    for (const wake of this.#waiters) wake()
    switch (message.type) {
      case 'turn.start':
        if (message.role === 'assistant') {
          this.userIsSpeaking = false
        } else if (message.role === 'user' && !this.pushToTalkEnabled) {
          // "Interrupt any playing agent audio if this is a turn triggered by the server"
          await this._clientInterruptAgentReplay()
          this.agentIsSpeaking = false
          this.userIsSpeaking = true
        } else if (message.role === 'user') {
          this.agentIsSpeaking = false
          this.userIsSpeaking = true
        }
        break
      case 'turn.end':
        if (message.role === 'user') this.userIsSpeaking = false
        else if (message.role === 'assistant') this.agentIsSpeaking = false
        break
      case 'response.audio': {
        const bytes = Buffer.from(message.content, 'base64').length
        const enqueued = bytes > 0 && this.wavPlayer.add16BitPCM(bytes, message.turn_id)
        if (!this.currentTurnId || this.currentTurnId !== message.turn_id) {
          this.currentTurnId = message.turn_id
          this.wavPlayer.clearInterruptedTracks(this.currentTurnId ? [this.currentTurnId] : [])
        }
        if (enqueued) this.agentIsSpeaking = true
        break
      }
      case 'response.text':
      case 'response.text.delta':
        if (!this.currentTurnId) this.currentTurnId = message.turn_id
        break
      default:
        break
    }
  }

  /** The first message, received or to come, that `pred` accepts. */
  waitFor(pred: (m: any) => boolean, timeoutMs = 15_000): Promise<{ at: number; m: any }> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.received.find((x) => pred(x.m))
        if (found === undefined) return
        done()
        resolve(found)
      }
      const timer = setTimeout(() => {
        done()
        reject(new Error(`timed out; got ${JSON.stringify(this.received.map((x) => x.m.type))}`))
      }, timeoutMs)
      const done = () => {
        clearTimeout(timer)
        this.#waiters.delete(check)
      }
      this.#waiters.add(check)
      check()
    })
  }

  close(): void {
    this.wavPlayer.disconnect()
    this.ws.close()
  }
}
