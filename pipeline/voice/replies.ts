import type { OutputAudioFormat } from '../audio/audio-format.js'
import type { AgentContext, AgentEvent, AgentRequest, AgentStep, HistoryItem } from '../agent/agent-step.js'
import type { TtsEvent, TtsStream } from '../vendors/tts/tts-stream.js'
import type { PipelineLogger } from '../runtime/logger.js'
import type { PreviousTurnLatency } from '../latency/latency-breakdown.js'
import { AssistantTurn, type UserEnd } from './assistant-turn.js'
import type { PipelineEvent, PipelineHooks } from './pipeline-io.js'
import { failureDetail } from '../agent/turn-failure.js'
import { ReplyPlayout } from './reply-playout.js'
import { ReplyRequests, type ReplySource } from './reply-request.js'
import type { ReplySafety } from './reply-safety.js'
import { ReplySpeech } from './reply-speech.js'

/** What the reply side needs from its pipeline. */
export interface RepliesDeps {
  agent: AgentStep
  tts: TtsStream | undefined
  /** The transport's output format; undefined for text-only transports. */
  output: OutputAudioFormat | undefined
  /** The session's facts; `history` grows as replies finish. */
  context: Omit<AgentContext, 'history'> & { history: HistoryItem[] }
  emit(e: PipelineEvent): void
  hooks: PipelineHooks
  logger: PipelineLogger
  signal: AbortSignal
  now(): number
  notice(code: string, message: string): void
  /** A reply is over (heard in full, interrupted, or failed): the pipeline decides what comes next. */
  onFinished(turn: AssistantTurn): void
  /** Fallback speech, the reply timeout and the holding phrase; undefined: failures are only recorded. */
  safety?: ReplySafety | undefined
}

/**
 * The assistant side of the conversation, one reply at a time: asks the agent step (`ReplyRequests`: timeouts,
 * failures, fallback), streams its text to TTS as it arrives (`ReplySpeech`), hands the TTS's audio to playout
 * (`ReplyPlayout`: chunks, keypad tones, what the caller heard), and finishes the turn (transcript, history,
 * latency) once it was heard or interrupted.
 */
export class Replies {
  readonly #d: RepliesDeps
  readonly #playout: ReplyPlayout
  readonly #speech: ReplySpeech
  readonly #requests: ReplyRequests
  #turn: AssistantTurn | undefined
  #closed = false
  /** The last finished turn's latency, offered on the next `message` request; undefined when it had none. */
  #previous: PreviousTurnLatency | undefined

  constructor(d: RepliesDeps) {
    this.#d = d
    const emit = (e: PipelineEvent) => d.emit(e)
    const now = () => d.now()
    this.#playout = new ReplyPlayout({ output: d.output, emit, hooks: d.hooks, now })
    this.#speech = new ReplySpeech({
      tts: d.tts,
      output: d.output,
      playout: this.#playout,
      emit,
      logger: d.logger,
      now,
      notice: (code, message) => d.notice(code, message),
      current: () => this.#turn,
      done: (a) => this.#maybeFinish(a),
    })
    this.#requests = new ReplyRequests({
      signal: d.signal,
      safety: d.safety,
      say: (a, text, fromAgent) => this.#speech.say(a, text, fromAgent),
      queueDtmf: (a, dtmf) => this.#playout.queueDtmf(a, dtmf),
      emit,
      hooks: d.hooks,
      logger: d.logger,
      now,
      closed: () => this.#closed,
    })
  }

  get #hasSpeech(): boolean {
    return this.#speech.audible
  }

  /** The reply in progress (not yet heard in full), if any. */
  get active(): AssistantTurn | undefined {
    return this.#turn !== undefined && !this.#turn.finished ? this.#turn : undefined
  }

  /** Starts answering `request`. */
  start(
    request: AgentRequest & { kind: 'welcome' | 'message' | 'machine_detection' | 'transfer_failed' },
    userText: string | null,
    userEnd: UserEnd,
    defaultLine?: string,
  ): void {
    const a = this.#open(request.turnId, request.kind, userText, userEnd)
    const asked = request.kind === 'message' && this.#previous !== undefined ? { ...request, previousTurn: this.#previous } : request
    const counted = request.kind === 'machine_detection' || request.kind === 'transfer_failed' ? undefined : request.kind
    void this.#run(a, (signal) => this.#d.agent.respond(asked, { ...this.#d.context }, { signal }), counted, defaultLine)
  }

  /**
   * Speaks text the agent gave outside a turn (in its reply to a `data` request) as an assistant turn of its own,
   * ending the session afterwards when `hangup`.
   */
  speak(turnId: string, text: string, hangup: boolean): void {
    const a = this.#open(turnId, 'data', null, {})
    const said: AgentEvent[] = [hangup ? { type: 'hangup', text } : { type: 'tts', text }, { type: 'end' }]
    void this.#run(a, () => said)
  }

  /**
   * The recognizer lost the caller's words: the first fallback message is spoken as a turn of its own, stored as
   * failed (`stt_failed`, `cause` as its `detail`: the error's code and status). False when the agent has no fallback speech (not `agent.webhook`).
   */
  sttFailed(turnId: string, cause: string): boolean {
    const text = this.#d.safety?.fallback.messages[0]
    if (text === undefined) return false
    const a = this.#open(turnId, 'data', null, {})
    a.failure = { cause: 'stt_failed', detail: failureDetail(cause), heard: text }
    void this.#run(a, () => [{ type: 'tts', text } as const, { type: 'end' } as const])
    return true
  }

  #open(turnId: string, kind: AssistantTurn['kind'], userText: string | null, userEnd: UserEnd): AssistantTurn {
    const a = new AssistantTurn(turnId, kind, userText, this.#hasSpeech, this.#d.output === 'ulaw_8000')
    const { reason, ...times } = userEnd
    Object.assign(a.timings, times)
    a.userEndReason = reason
    a.openedAt = this.#d.now()
    this.#turn = a
    this.#d.emit({ type: 'turn.start', role: 'assistant', turnId: a.turnId })
    return a
  }

  /** Runs one reply; `requestKind` when it is an agent request, whose outcome the hooks are told. */
  async #run(a: AssistantTurn, events: ReplySource, requestKind?: 'welcome' | 'message', defaultLine?: string): Promise<void> {
    if (!(await this.#requests.run(a, events, requestKind, defaultLine))) return
    a.agentDone = true
    const text = a.text.trim()
    if (text !== '') this.#d.emit({ type: 'assistant.text', turnId: a.turnId, content: text })
    this.#d.emit({ type: 'response.end', turnId: a.turnId })
    this.#speech.textDone(a, text)
    this.#maybeFinish(a)
  }

  /** One event of the session's TTS stream. */
  onTtsEvent(e: TtsEvent): void {
    this.#speech.onTtsEvent(e)
  }

  /** The TTS stream ended for good: an open reply can only finish text-wise. */
  ttsEnded(): void {
    this.#speech.ttsEnded()
  }

  /** Carrier mark: chunks up to `chunkId` were heard. */
  markPlayed(chunkId: number): void {
    const a = this.#turn
    if (a !== undefined && this.#playout.markPlayed(a, chunkId)) this.#maybeFinish(a)
  }

  /** The transport wrote chunk `chunkId` to its socket: the turn's first frame out, when the chunk is its. */
  audioWritten(chunkId: number): void {
    const a = this.#turn
    if (a !== undefined) this.#playout.audioWritten(a, chunkId)
  }

  /** Browser replay_finished: everything sent for `turnId` (or, without one, what real time allows) was played. */
  replayFinished(turnId: string | undefined): void {
    const a = this.#turn
    if (a === undefined || (turnId !== undefined && a.turnId !== turnId)) return
    if (this.#playout.replayFinished(a, turnId)) this.#maybeFinish(a)
  }

  /** Caller speech over the reply may be an interruption: playout stops where it is until `resume` or `interrupt`. */
  pause(): void {
    const a = this.active
    if (a === undefined || a.pausedAt !== undefined || this.#d.output === undefined) return
    a.pausedAt = this.#d.now()
    // Nothing is heard while paused: the wait for the transport's reports starts again on resume.
    clearTimeout(a.safetyTimer)
    this.#d.emit({ type: 'pause_playback', turnId: a.turnId })
  }

  /** The caller's speech was not an interruption (a backchannel, a cough): the paused reply plays on from there. */
  resume(): void {
    const a = this.#turn
    if (a === undefined || !this.#playOn(a)) return
    this.#maybeFinish(a)
  }

  /** Tells the transport to play on from the pause; false when `a` is not paused. */
  #playOn(a: AssistantTurn): boolean {
    if (a.pausedAt === undefined || a.interrupted) return false
    const pausedMs = Math.round(this.#d.now() - a.pausedAt)
    a.pausedAt = undefined
    this.#d.emit({ type: 'resume_playback', turnId: a.turnId })
    this.#d.logger.info({ turn_id: a.turnId, paused_ms: pausedMs }, 'reply resumed: the caller spoke over it without interrupting')
    return true
  }

  /**
   * Barge-in: stops the reply now (aborts the agent request, cancels the TTS context, clears playback), calls
   * `announce` so the user's turn is told before the reply's end, and finishes it with what was heard.
   */
  interrupt(announce: () => void): void {
    const a = this.active
    if (a === undefined) return
    // The caller heard it stop at the pause: the words that came since confirmed the interruption.
    if (a.pausedAt !== undefined)
      this.#d.logger.info({ turn_id: a.turnId, paused_ms: Math.round(this.#d.now() - a.pausedAt) }, 'paused reply interrupted')
    a.interrupted = true
    a.abort.abort()
    this.#speech.cancel(a)
    this.#d.emit({ type: 'clear_playback', turnId: a.turnId })
    announce()
    this.#finish(a)
  }

  /**
   * The session is ending: a reply still in progress is cut off like a barge-in, so the transcript keeps the
   * user's words and what the caller heard of the answer.
   */
  close(): void {
    if (this.#closed) return
    const a = this.active
    if (a !== undefined) {
      a.interrupted = true
      a.abort.abort()
      this.#finish(a)
    }
    this.#closed = true
  }

  /** Finishes the turn once the reply is complete and the caller has heard it. */
  #maybeFinish(a: AssistantTurn): void {
    if (a.finished || a.interrupted || !a.agentDone || !a.ttsDone) return
    // The speech is all out: the tones follow it, and the turn is finished once the caller has heard both.
    if (this.#playout.heard(a, () => this.#maybeFinish(a))) this.#finish(a)
  }

  #finish(a: AssistantTurn): void {
    if (a.finished) return
    // A transport never stays paused past its turn (a report timeout may finish a paused one).
    this.#playOn(a)
    a.finished = true
    clearTimeout(a.safetyTimer)
    const said = a.transcriptText(this.#d.now(), this.#hasSpeech)
    const completed = a.completed(said, this.#d.now(), this.#hasSpeech)
    const { latencyMs, latencyBreakdown: breakdown } = completed ?? { latencyMs: null, latencyBreakdown: a.breakdown() }
    this.#previous = breakdown === null || latencyMs === null ? undefined : { turnId: a.turnId, latencyMs, breakdown }
    if (a.userText) this.#d.context.history.push({ role: 'user', text: a.userText })
    if (said !== '') this.#d.context.history.push({ role: 'assistant', text: said })
    this.#d.emit({ type: 'turn.end', role: 'assistant', turnId: a.turnId })
    if (completed !== null) this.#d.hooks.turnCompleted(completed)
    if (this.#turn === a) this.#turn = undefined
    this.#d.onFinished(a)
  }
}
