import type { OutputAudioFormat } from '../audio/audio-format.js'
import type { AgentContext, AgentEvent, AgentRequest, AgentStep, HistoryItem } from '../agent/agent-step.js'
import type { TtsEvent, TtsStream } from '../vendors/tts/tts-stream.js'
import type { PipelineLogger } from '../runtime/logger.js'
import type { PreviousTurnLatency } from '../latency/latency-breakdown.js'
import { AssistantTurn, type UserEnd } from './assistant-turn.js'
import type { PipelineEvent, PipelineHooks } from './pipeline-io.js'
import { failureDetail } from '../agent/turn-failure.js'
import { type AgentEventSink, applyAgentEvent } from './agent-events.js'
import { ReplyPlayout } from './reply-playout.js'
import { FailureStreak, guardReply, HoldingPhrases, type ReplySafety } from './reply-safety.js'

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
 * The assistant side of the conversation, one reply at a time: asks the agent step, streams its text to TTS as
 * it arrives, hands the TTS's audio to playout (`ReplyPlayout`: chunks, keypad tones, what the caller heard), and
 * finishes the turn (transcript, history, latency) once it was heard or interrupted.
 */
export class Replies {
  readonly #d: RepliesDeps
  readonly #playout: ReplyPlayout
  #turn: AssistantTurn | undefined
  #closed = false
  /** The last finished turn's latency, offered on the next `message` request; undefined when it had none. */
  #previous: PreviousTurnLatency | undefined
  readonly #streak: FailureStreak | undefined
  readonly #holding: HoldingPhrases | undefined

  constructor(d: RepliesDeps) {
    this.#d = d
    this.#playout = new ReplyPlayout({ output: d.output, emit: (e) => d.emit(e), hooks: d.hooks, now: () => d.now() })
    this.#streak = d.safety === undefined ? undefined : new FailureStreak(d.safety.fallback)
    this.#holding = d.safety?.holding.enabled ? new HoldingPhrases(d.safety.holding.messages) : undefined
  }

  get #hasSpeech(): boolean {
    return this.#d.tts !== undefined && this.#d.output !== undefined
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
  async #run(
    a: AssistantTurn,
    events: (signal: AbortSignal) => AsyncIterable<AgentEvent> | Iterable<AgentEvent>,
    requestKind?: 'welcome' | 'message',
    /** Said when the reply had nothing speakable (a failed warm transfer: the caller must not hear silence). */
    defaultLine?: string,
  ): Promise<void> {
    // The turn's own controller, also aborted with the session (AbortSignal.any's composite signals can be
    // collected on Node 20 and then never fire).
    const onSessionAbort = () => a.abort.abort()
    this.#d.signal.addEventListener('abort', onSessionAbort, { once: true })
    // The agent request's own controller: the reply timeout ends the request without ending the turn.
    const request = new AbortController()
    const onTurnAbort = () => request.abort()
    a.abort.signal.addEventListener('abort', onTurnAbort, { once: true })
    const safety = requestKind === 'message' ? this.#d.safety : undefined
    const timers =
      safety === undefined
        ? []
        : guardReply(a, safety, {
            elapsedMs: this.#d.now() - (a.timings.userEndAt ?? this.#d.now()),
            holding: this.#holding,
            abortRequest: () => request.abort(),
            say: (text) => this.#say(a, text, false),
          })
    let failed = false
    const sink: AgentEventSink = {
      say: (text) => this.#say(a, text, true),
      queueDtmf: (dtmf) => this.#playout.queueDtmf(a, dtmf),
      emit: (event) => this.#d.emit(event),
      logger: this.#d.logger,
      now: () => this.#d.now(),
    }
    try {
      for await (const e of events(request.signal)) {
        if (a.interrupted || this.#closed) break
        if (applyAgentEvent(a, e, sink)) failed = true
      }
    } catch (err) {
      failed = true
      if (!request.signal.aborted) {
        this.#d.logger.error({ err, turn_id: a.turnId }, 'agent step failed')
        a.failure ??= { cause: 'invalid_stream', detail: 'the agent step failed', heard: null }
      }
    }
    for (const timer of timers) clearTimeout(timer)
    this.#d.signal.removeEventListener('abort', onSessionAbort)
    a.abort.signal.removeEventListener('abort', onTurnAbort)
    const cancelled = a.abort.signal.aborted || a.interrupted || this.#closed
    if (!cancelled && requestKind === 'message' && a.failure === undefined && !a.agentSpoke && !a.hangup && a.transfer === undefined) {
      // Only keypad tones or data, or nothing at all: the caller would be left in silence.
      if (a.dtmf.length === 0) a.failure = { cause: 'empty_reply', detail: 'the reply ended with nothing to speak', heard: null }
    }
    if (!cancelled && defaultLine !== undefined && !a.agentSpoke && !a.hangup && a.transfer === undefined) {
      this.#say(a, defaultLine, false)
    }
    if (requestKind !== undefined) {
      const outcome = cancelled ? 'cancelled' : failed || a.failure !== undefined ? 'failed' : 'delivered'
      this.#d.hooks.agentRequestDone?.({ kind: requestKind, outcome })
    }
    if (a.interrupted || this.#closed) return
    if (requestKind === 'message') this.#fallBack(a)
    a.agentDone = true
    const text = a.text.trim()
    if (text !== '') this.#d.emit({ type: 'assistant.text', turnId: a.turnId, content: text })
    this.#d.emit({ type: 'response.end', turnId: a.turnId })
    if (!a.ttsDone) {
      if (text === '') a.ttsDone = true
      else this.#d.tts?.flush(a.turnId)
    }
    this.#maybeFinish(a)
  }

  /** A message turn is over on the agent's side: count it, and say the fallback when it failed. */
  #fallBack(a: AssistantTurn): void {
    const streak = this.#streak
    if (streak === undefined) return
    // Speech synthesis failing is not the agent's failure, and a fallback could not be spoken anyway.
    if (a.failure === undefined || a.failure.cause === 'tts_failed') {
      streak.succeeded()
      return
    }
    const speech = streak.failed()
    if (speech.next === 'hangup') a.hangup = true
    if (speech.next === 'transfer') a.transfer = { to: speech.to }
    this.#d.logger.info(
      { turn_id: a.turnId, cause: a.failure.cause, consecutive: streak.consecutive, next: speech.next },
      'agent turn failed: fallback spoken',
    )
    this.#say(a, speech.text, false)
    a.failure.heard = speech.text
  }

  /** Says `text` in turn `a`; `fromAgent` false for the gateway's own words (holding phrase, fallback). */
  #say(a: AssistantTurn, text: string, fromAgent: boolean): void {
    if (fromAgent) a.agentSpoke = true
    a.timings.firstTextAt ??= this.#d.now()
    const sep = a.text === '' || /\s$/.test(a.text) || /^\s/.test(text) ? '' : ' '
    a.text += sep + text
    this.#d.emit({ type: 'assistant.text.delta', turnId: a.turnId, content: sep + text })
    if (!a.ttsDone && this.#d.tts !== undefined) {
      a.timings.ttsRequestAt ??= this.#d.now()
      this.#d.tts.pushText(a.turnId, sep + text)
    }
  }

  /** One event of the session's TTS stream. */
  onTtsEvent(e: TtsEvent): void {
    const a = this.#turn
    if (e.type === 'audio') {
      if (!a || a.turnId !== e.contextId || a.interrupted || this.#d.output === undefined) return
      this.#playout.speech(a, e.audio)
    } else if (e.type === 'done') {
      if (a && a.turnId === e.contextId) this.#speechDone(a)
    } else if (e.type === 'error') {
      this.#d.logger.warn({ code: e.code, fatal: e.fatal }, `speech synthesis: ${e.message}`)
      if (a && (e.fatal || e.contextId === a.turnId)) {
        if (a.text !== '' && !a.ttsDone) a.failure ??= { cause: 'tts_failed', detail: failureDetail(e.message), heard: null }
        this.#speechDone(a)
      }
      if (e.fatal) this.#d.notice('tts_unavailable', 'speech synthesis is unavailable for this call: replies come as text only')
    }
  }

  /** The TTS stream ended for good: an open reply can only finish text-wise. */
  ttsEnded(): void {
    if (this.#turn && !this.#turn.ttsDone) this.#speechDone(this.#turn)
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
    this.#d.tts?.cancel(a.turnId)
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

  #speechDone(a: AssistantTurn): void {
    a.ttsDone = true
    this.#maybeFinish(a)
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
