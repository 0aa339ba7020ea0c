import type { InputAudioFormat, OutputAudioFormat } from '../audio/audio-format.js'
import type { AgentContext, AgentRequest, AgentStep, HistoryItem } from '../agent/agent-step.js'
import type { PipelineConfig } from '../config/schema.js'
import type { TurnManagerOptions } from '../config/turn-manager-options.js'
import type { SttEvent, SttStream } from '../stt/stt-stream.js'
import type { TtsStream } from '../tts/tts-stream.js'
import type { PipelineLogger } from '../runtime/logger.js'
import { pump } from '../runtime/pump.js'
import { newTurnId } from './turn-ids.js'
import type { AssistantTurn, UserEnd } from './assistant-turn.js'
import { BargeInGate } from './barge-in.js'
import { UserTurn } from './user-turn.js'
import { CallerAudio, type VadFactory } from './caller-audio.js'
import { joinSpeech, relayData } from './data-relay.js'
import type { PipelineEvent, PipelineHooks, PipelineInput } from './pipeline-io.js'
import { Replies } from './replies.js'
import { replySafetyOf } from './reply-safety.js'

/** User turns said over a reply that may not be interrupted, kept apart to be announced after it. */
const MAX_HELD_TURNS = 20

/** Everything a pipeline is built from; the gateway creates the streams from the validated config. */
export interface VoicePipelineDeps {
  config: PipelineConfig
  /** The transport's audio formats; undefined for a text-only transport. */
  audio: { input: InputAudioFormat; output: OutputAudioFormat } | undefined
  context: Omit<AgentContext, 'history'> & { history: HistoryItem[] }
  agent: AgentStep
  /** The welcome turn's id, chosen by the session so its lifecycle `session.start` names the same turn; default: a new one. */
  welcomeTurnId?: string | undefined
  /** The STT stream, or undefined when no vendor key is configured (typed text, DTMF and data still work). */
  stt: SttStream | undefined
  tts: TtsStream | undefined
  createVad?: VadFactory | undefined
  emit(event: PipelineEvent): void
  hooks: PipelineHooks
  logger: PipelineLogger
  signal: AbortSignal
  now?: () => number
}

/**
 * One session's voice loop: caller audio -> VAD -> STT -> turn taking -> agent step -> TTS -> audio out, with
 * barge-in, push-to-talk and the welcome turn. Transport-agnostic: it speaks only `PipelineInput` and
 * `PipelineEvent`.
 */
export class VoicePipeline implements PipelineInput {
  readonly #deps: VoicePipelineDeps
  readonly #tm: TurnManagerOptions
  readonly #now: () => number
  readonly #caller: CallerAudio | undefined
  readonly #bargeIn: BargeInGate
  readonly #pushToTalkMode: boolean
  /** VAD off (and no push-to-talk): the STT's speech events and end of turn delimit user turns. */
  readonly #sttTurns: boolean
  #user: UserTurn | undefined
  readonly #replies: Replies
  /**
   * Words to answer once the reply in progress is over, with the user turns that said them: a turn committed
   * while the reply may not be interrupted is announced only when the reply has been heard.
   */
  #pending: { text: string; userEnd: UserEnd; turns: { turn: UserTurn; text: string }[] } | undefined
  /** A machine detection verdict waiting for the reply in progress to finish. */
  #pendingVerdict: { kind: 'machine_detection'; turnId: string; answeredBy: string } | undefined
  /** Speech from data replies waiting for the reply in progress to finish (bounded). */
  #pendingSpeech: { text: string; hangup: boolean } | undefined
  #commitTimer: NodeJS.Timeout | undefined
  /** With `#sttTurns`: fires `base_timeout_ms` after the STT last heard speech or words. */
  #quietTimer: NodeJS.Timeout | undefined
  #lastHeardAt = 0
  #speaking = false
  #pttPressed = false
  #closed = false
  readonly #noticed = new Set<string>()

  constructor(deps: VoicePipelineDeps) {
    this.#deps = deps
    const tm = deps.config.plugins.find((p) => p.use === 'turn_manager')
    if (tm?.use !== 'turn_manager') throw new Error('pipeline config has no turn_manager')
    this.#tm = tm.options
    this.#now = deps.now ?? (() => performance.now())
    this.#pushToTalkMode = this.#tm.trigger === 'push_to_talk'
    this.#sttTurns = deps.config.vad.enabled === false && !this.#pushToTalkMode
    this.#bargeIn = new BargeInGate(
      {
        allowInterruptions: this.#tm.allow_interruptions,
        minInterruptionMs: this.#tm.min_interruption_ms,
        // An STT reports when speech starts but not when a cough is over: without a VAD, barge-in needs a word.
        minInterruptionWords: this.#sttTurns ? Math.max(1, this.#tm.min_interruption_words) : this.#tm.min_interruption_words,
      },
      // The reply may have become uninterruptible (a farewell) while the gate was timing the speech.
      () => {
        if (this.#canInterrupt()) this.#interrupt()
      },
      () => this.#user?.wordCount ?? 0,
    )
    this.#replies = new Replies({
      agent: deps.agent,
      tts: deps.tts,
      output: deps.audio?.output,
      context: deps.context,
      emit: (e) => deps.emit(e),
      hooks: deps.hooks,
      logger: deps.logger,
      signal: deps.signal,
      now: this.#now,
      notice: (code, message) => this.#notice(code, message),
      onFinished: (a) => this.#replyFinished(a),
      safety: replySafetyOf(deps.config),
    })
    if (deps.audio !== undefined) {
      this.#caller = new CallerAudio({
        format: deps.audio.input,
        vad: deps.config.vad,
        useVad: !this.#pushToTalkMode,
        stt: deps.stt,
        createVad: deps.createVad,
        logger: deps.logger,
        sendToStt: () => (this.#pushToTalkMode ? this.#pttPressed : undefined),
        onSpeechStart: () => this.#speechStarted(),
        onSpeechEnd: () => this.#speechEnded(),
        onMisfire: () => this.#misfire(),
      })
    }
    deps.signal.addEventListener('abort', () => this.close(), { once: true })
  }

  /** Starts the STT and TTS loops and the welcome turn. */
  start(): void {
    if (this.#deps.audio !== undefined && this.#deps.stt === undefined && this.#deps.config.plugins.some((p) => p.use.startsWith('stt.'))) {
      this.#notice('stt_not_configured', 'speech recognition is not configured on this gateway (no STT vendor key): send text instead')
    }
    const log = this.#deps.logger
    if (this.#deps.stt)
      void pump(
        this.#deps.stt,
        (e) => this.#onSttEvent(e),
        () => this.#closed,
        log,
        'speech recognition',
      )
    const output = this.#deps.audio?.output
    if (this.#deps.tts && output !== undefined) {
      // When the TTS stream ends for good, an open turn can only finish text-wise.
      void pump(
        this.#deps.tts,
        (e) => this.#replies.onTtsEvent(e),
        () => this.#closed,
        log,
        'speech synthesis',
      ).then(() => this.#replies.ttsEnded())
    }
    if (this.#deps.agent.handles.has('welcome'))
      this.#startAssistant({ kind: 'welcome', turnId: this.#deps.welcomeTurnId ?? newTurnId('assistant') }, null, {})
  }

  // ---- PipelineInput -------------------------------------------------------------------------------------

  pushAudio(chunk: Buffer): void {
    if (!this.#closed) this.#caller?.push(chunk)
  }

  clientVad(event: 'vad_start' | 'vad_end' | 'vad_model_failed'): void {
    if (this.#pushToTalkMode || this.#closed) return
    if (event === 'vad_start') this.#speechStarted()
    else if (event === 'vad_end') this.#speechEnded()
  }

  pushToTalk(pressed: boolean): void {
    if (this.#closed || pressed === this.#pttPressed) return
    this.#pttPressed = pressed
    if (pressed) {
      // An explicit press is never a false barge-in.
      if (this.#isAssistantActive() && this.#canInterrupt()) this.#interrupt()
      this.#ensureUserTurn(true)
      this.#deps.hooks.userActivity()
    } else {
      this.#speechEnded()
    }
  }

  userText(text: string): void {
    const t = text.trim()
    if (this.#closed || t === '') return
    this.#deps.hooks.userActivity()
    const turn = this.#ensureUserTurn(!this.#isAssistantActive() || this.#canInterrupt())
    turn.addFinal(t)
    this.#commitUserTurn(undefined)
  }

  userData(data: unknown): void {
    if (this.#closed) return
    if (!this.#deps.agent.handles.has('data')) {
      this.#deps.logger.debug({}, 'client data not relayed: the agent does not take data events')
      return
    }
    const turnId = this.#replies.active?.turnId ?? this.#user?.turnId ?? newTurnId('data')
    void relayData(this.#deps.agent, { ...this.#deps.context }, turnId, data, {
      emit: (e) => this.#deps.emit(e),
      speak: (text, hangup) => this.#speakDataReply(text, hangup),
      logger: this.#deps.logger,
      signal: this.#deps.signal,
    })
  }

  /** A data reply had text to speak: it gets an assistant turn of its own, after the reply in progress if any. */
  #speakDataReply(text: string, hangup: boolean): void {
    if (this.#closed) return
    if (this.#isAssistantActive()) {
      const q = this.#pendingSpeech
      this.#pendingSpeech = { text: joinSpeech(q?.text ?? '', text), hangup: hangup || (q?.hangup ?? false) }
      return
    }
    this.#bargeIn.reset()
    this.#replies.speak(newTurnId('assistant'), text, hangup)
  }

  dtmf(digit: string): void {
    if (this.#closed) return
    this.#deps.hooks.userActivity()
    this.userData({ dtmf: digit })
  }

  /**
   * Answering machine detection decided (an outbound call): the agent is asked like a turn. For a machine, the
   * reply in progress (the welcome, talking over a greeting) stops at once, so the agent's message follows the
   * beep; for a person, the question waits for the reply in progress to finish.
   */
  machineVerdict(verdict: string): void {
    if (this.#closed) return
    const request = { kind: 'machine_detection' as const, turnId: newTurnId('assistant'), answeredBy: verdict }
    const machine = verdict === 'machine' || verdict === 'machine_beep'
    if (this.#isAssistantActive()) {
      if (!machine || this.#replies.active?.hangup) {
        this.#pendingVerdict = request
        return
      }
      // Words the greeting produced are not for the agent to answer now.
      this.#pending = undefined
      this.#replies.interrupt(() => undefined)
    }
    this.#startAssistant(request, null, {})
  }

  callControlFailed(failure: { data: unknown; apology?: string | undefined }): void {
    if (this.#closed) return
    if (failure.apology !== undefined && failure.apology !== '') this.#speakDataReply(failure.apology, false)
    this.userData(failure.data)
  }

  markPlayed(chunkId: number): void {
    this.#replies.markPlayed(chunkId)
  }

  audioWritten(chunkId: number): void {
    this.#replies.audioWritten(chunkId)
  }

  replayFinished(turnId?: string): void {
    this.#replies.replayFinished(turnId)
  }

  /**
   * Stops everything; idempotent. Nothing said is lost: a reply in progress is stored with what the caller
   * heard of it, and words no reply has answered yet are stored on their own.
   */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    clearTimeout(this.#commitTimer)
    clearTimeout(this.#quietTimer)
    this.#bargeIn.reset()
    this.#replies.close()
    const unanswered = [this.#pending?.text, this.#user?.text()].filter((t) => t !== undefined && t !== '').join(' ')
    if (unanswered !== '') {
      const none = { totalMs: null, agentMs: null, ttsMs: null, gatewayMs: null }
      this.#deps.hooks.turnCompleted({
        turnId: this.#user?.turnId ?? newTurnId('user'),
        timestamp: new Date(),
        userMessage: unanswered,
        assistantMessage: null,
        latencyMs: null,
        latency: none,
        latencyBreakdown: null,
        latencyOrigin: null,
        interrupted: false,
        failure: null,
      })
    }
    this.#pending = undefined
    this.#user = undefined
    this.#caller?.close()
    void this.#deps.stt?.close()
    void this.#deps.tts?.close()
  }

  // ---- user side ------------------------------------------------------------------------------------------

  #isAssistantActive(): boolean {
    return this.#replies.active !== undefined
  }

  #canInterrupt(): boolean {
    if (!this.#tm.allow_interruptions) return false
    const active = this.#replies.active
    // A farewell (`response.hangup`) is heard to the end: the SPEC ends the session only after it played.
    if (active?.hangup || active?.transfer !== undefined) return false
    return !(active?.kind === 'welcome' && this.#tm.disable_interruptions_during_welcome)
  }

  /** The user turn in progress, created (and announced when `announce`) if there is none. */
  #ensureUserTurn(announce: boolean): UserTurn {
    if (this.#user === undefined) {
      this.#user = new UserTurn(newTurnId('user'), this.#now(), (e) => this.#deps.emit(e))
    }
    if (announce) this.#user.announce()
    return this.#user
  }

  #speechStarted(): void {
    if (this.#speaking || this.#closed) return
    this.#speaking = true
    clearTimeout(this.#commitTimer)
    this.#deps.hooks.userActivity()
    const active = this.#isAssistantActive()
    // During an assistant turn the user turn is announced only once it counts as a barge-in.
    this.#ensureUserTurn(!active)
    if (active) this.#bargeIn.speechStarted(this.#now(), this.#canInterrupt())
  }

  #speechEnded(): void {
    if (!this.#speaking && !this.#pushToTalkMode) return
    this.#stopSpeaking()
    this.#deps.stt?.finalize()
    // The vendor's end-of-turn normally commits the turn; this is the fallback.
    this.#commitLater()
  }

  #misfire(): void {
    this.#speaking = false
    this.#bargeIn.speechEnded()
    if (this.#user && this.#user.text() === '' && !this.#pushToTalkMode) this.#commitLater()
  }

  /** The user stopped speaking now: barge-in timing stops and the user turn's speech ends here. */
  #stopSpeaking(): void {
    this.#speaking = false
    this.#bargeIn.speechEnded()
    if (this.#user) this.#user.speechEndedAt = this.#now()
  }

  /** Commits the user turn `base_timeout_ms` from now unless something commits it first. */
  #commitLater(): void {
    clearTimeout(this.#commitTimer)
    this.#commitTimer = setTimeout(() => this.#commitUserTurn(undefined), this.#tm.base_timeout_ms)
    this.#commitTimer.unref()
  }

  #onSttEvent(e: SttEvent): void {
    switch (e.type) {
      case 'speech_started':
        if (this.#sttTurns) this.#sttHeard()
        break
      case 'interim':
        if (this.#sttTurns) this.#sttHeard()
        this.#ensureUserTurn(!this.#isAssistantActive()).addInterim(e.text)
        this.#bargeIn.wordsChanged()
        break
      case 'final':
        if (this.#sttTurns) this.#sttHeard()
        if (e.words !== undefined && this.#caller !== undefined) this.#deps.hooks.sttWords?.(this.#caller.callerWords(e.words))
        this.#ensureUserTurn(!this.#isAssistantActive()).addFinal(e.text)
        this.#bargeIn.wordsChanged()
        break
      case 'end_of_turn':
        if (this.#pushToTalkMode) {
          if (this.#pttPressed) break
        } else if (this.#sttTurns) {
          this.#sttSpeechOver()
        } else if (this.#speaking) {
          break // the VAD still hears speech: wait for it
        }
        this.#commitUserTurn(e.text)
        break
      case 'reconnected':
        this.#user?.restart()
        break
      case 'error':
        this.#deps.logger.warn({ code: e.code, fatal: e.fatal }, `speech recognition: ${e.message}`)
        if (e.fatal) this.#notice('stt_unavailable', 'speech recognition stopped working for this call: send text instead')
        break
    }
  }

  /** VAD off: the STT heard speech or words. The turn goes on until its end of turn or `base_timeout_ms` of quiet. */
  #sttHeard(): void {
    this.#speechStarted()
    this.#lastHeardAt = this.#now()
    clearTimeout(this.#quietTimer)
    this.#quietTimer = setTimeout(() => this.#sttQuiet(), this.#tm.base_timeout_ms)
    this.#quietTimer.unref()
  }

  /**
   * VAD off, and the STT went quiet without an end of turn: words heard end the speech as a VAD would (the vendor is
   * asked to finalize, and the turn ends on its answer or `base_timeout_ms` later); speech without words was noise.
   */
  #sttQuiet(): void {
    if (this.#closed || !this.#speaking) return
    if (this.#user === undefined || this.#user.text() === '') {
      this.#misfire()
      return
    }
    this.#speechEnded()
    if (this.#user) this.#user.speechEndedAt = this.#lastHeardAt
  }

  /** VAD off: the STT ended the turn, so the user is no longer speaking. */
  #sttSpeechOver(): void {
    clearTimeout(this.#quietTimer)
    if (this.#speaking) this.#stopSpeaking()
  }

  /** Ends the user turn with its text and hands it to the agent (or queues it behind an uninterruptible reply). */
  #commitUserTurn(vendorText: string | undefined): void {
    clearTimeout(this.#commitTimer)
    if (this.#closed) return
    const turn = this.#user ?? (vendorText?.trim() ? this.#ensureUserTurn(!this.#isAssistantActive()) : undefined)
    if (turn === undefined) return
    const text = turn.complete(vendorText)
    this.#user = undefined
    if (text === '') return
    const userEndAt = turn.speechEndedAt ?? this.#now()
    const userEnd: UserEnd = { userEndAt, transcriptAt: this.#now() }
    this.#deps.hooks.usage({ transcriptionSeconds: Math.max(0, userEndAt - turn.startedAt) / 1000 })
    if (this.#isAssistantActive() && this.#canInterrupt()) this.#interrupt(turn)
    if (this.#replies.active?.hangup) {
      // Words said over the farewell are never answered; announcing them would make a browser stop the farewell.
      // They are kept, and stored with the transcript when the session ends.
      this.#holdUnanswered(text, userEnd)
      return
    }
    if (this.#isAssistantActive()) {
      // The reply may not be interrupted: the user's words wait for it to be heard, and so does their turn, whose
      // `turn.start` would make a browser SDK stop playing the reply.
      this.#holdUnanswered(text, userEnd, turn)
      return
    }
    this.#endUserTurn(turn, text)
    this.#startAssistant({ kind: 'message', turnId: newTurnId('assistant'), text }, text, userEnd)
  }

  /** Tells the client a user turn is over: its `turn.start` (and words) if not sent yet, the transcript, the end. */
  #endUserTurn(turn: UserTurn, text: string): void {
    turn.announce()
    this.#deps.emit({ type: 'user.transcript', turnId: turn.turnId, content: text })
    this.#deps.emit({ type: 'turn.end', role: 'user', turnId: turn.turnId })
  }

  /** Words to answer once the reply in progress is over, added to any already waiting (and their turn, if any). */
  #holdUnanswered(text: string, userEnd: UserEnd, turn?: UserTurn): void {
    const turns = this.#pending?.turns ?? []
    if (turn !== undefined) {
      // Bounded: beyond MAX_HELD_TURNS, a turn's words join the last held turn's (each turn is announced once).
      const last = turns.at(-1)
      if (turns.length >= MAX_HELD_TURNS && last !== undefined) last.text = `${last.text} ${text}`
      else turns.push({ turn, text })
    }
    this.#pending = { text: this.#pending ? `${this.#pending.text} ${text}` : text, userEnd, turns }
  }

  // ---- assistant side -------------------------------------------------------------------------------------

  #startAssistant(
    request: AgentRequest & { kind: 'welcome' | 'message' | 'machine_detection' },
    userText: string | null,
    userEnd: UserEnd,
  ): void {
    this.#bargeIn.reset()
    this.#replies.start(request, userText, userEnd)
  }

  /**
   * A reply is over: hang up after a farewell, speak what a data reply had to say, or answer what the user said
   * while the reply could not be interrupted.
   */
  #replyFinished(a: AssistantTurn): void {
    this.#bargeIn.reset()
    if (a.hangup && !a.interrupted) {
      this.#deps.emit({ type: 'hangup', reason: 'agent_hangup' })
      return
    }
    if (a.transfer !== undefined && !a.interrupted) {
      // The session asks the carrier; the call ends there, or a failure comes back through callControlFailed.
      this.#deps.emit({ type: 'transfer', turnId: a.turnId, ...a.transfer })
    }
    const verdict = this.#pendingVerdict
    this.#pendingVerdict = undefined
    if (verdict !== undefined && !this.#closed) {
      this.#startAssistant(verdict, null, {})
      return
    }
    const speech = this.#pendingSpeech
    this.#pendingSpeech = undefined
    if (speech && a.interrupted) {
      // The user took the turn: the conversation has moved on from what the data reply wanted to say.
      this.#deps.logger.debug({}, 'speech from a data reply dropped: the user interrupted')
    } else if (speech && !this.#closed) {
      this.#speakDataReply(speech.text, speech.hangup)
      return
    }
    const queued = this.#pending
    if (queued && !this.#closed) {
      this.#pending = undefined
      // The reply has been heard: now the user turns said over it may be announced, then answered.
      for (const held of queued.turns) this.#endUserTurn(held.turn, held.text)
      this.#startAssistant({ kind: 'message', turnId: newTurnId('assistant'), text: queued.text }, queued.text, queued.userEnd)
      return
    }
    // The user is still speaking as the reply ends: their turn can be announced now.
    if (this.#user !== undefined && !this.#closed && (this.#speaking || this.#user.text() !== '')) this.#user.announce()
  }

  /** Barge-in: the reply stops and the user's turn is announced (which tells a browser to stop playing). */
  #interrupt(userTurn: UserTurn | undefined = this.#user): void {
    this.#replies.interrupt(() => (userTurn ?? this.#ensureUserTurn(false)).announce())
  }

  #notice(code: string, message: string): void {
    if (this.#noticed.has(code)) return
    this.#noticed.add(code)
    this.#deps.logger.warn({ code }, message)
    this.#deps.emit({ type: 'notice', code, message })
  }
}
