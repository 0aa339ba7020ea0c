import type { InputAudioFormat, OutputAudioFormat } from '../audio/audio-format.js'
import type { AgentContext, AgentRequest, AgentStep, HistoryItem } from '../agent/agent-step.js'
import type { PipelineConfig } from '../config/schema.js'
import type { TurnManagerOptions } from '../options/turn-manager-options.js'
import type { SttStream } from '../vendors/stt/stt-stream.js'
import type { TtsStream } from '../vendors/tts/tts-stream.js'
import type { PipelineLogger } from '../runtime/logger.js'
import { newTurnId } from './turn-ids.js'
import type { AssistantTurn, UserEnd } from './assistant-turn.js'
import { CallerAudio, type VadFactory } from './caller-audio.js'
import { relayData } from './data-relay.js'
import type { PipelineEvent, PipelineHooks, PipelineInput } from './pipeline-io.js'
import { Replies } from './replies.js'
import { ReplyQueue, type MachineVerdictRequest } from './reply-queue.js'
import { replySafetyOf } from './reply-safety.js'
import { TurnTaking } from './turn-taking.js'
import { wordRulesOf } from './word-rules.js'
import type { UserTurn } from './user-turn.js'
import { startVendorLoops } from './vendor-loops.js'

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
 * One session's voice loop, a chain of named steps:
 *
 * 1. caller audio (`CallerAudio`): the transport's audio, decoded once for the VAD and handed to the STT;
 * 2. turn taking (`TurnTaking`): speech start and end (VAD, client VAD, push-to-talk or the STT), the STT's words
 *    into the user turn, barge-in timing, the end of the turn;
 * 3. the reply queue (`ReplyQueue`): what waits for the reply in progress (words said over a farewell, a machine
 *    detection verdict, speech from data replies);
 * 4. the agent step and TTS (`Replies`): one reply at a time, its text streamed to TTS as it arrives;
 * 5. playout (`ReplyPlayout`, inside `Replies`): audio chunks and keypad tones to the transport, and what the caller
 *    heard of them, until the reply is finished and the next step is chosen here.
 *
 * Transport-agnostic: it speaks only `PipelineInput` and `PipelineEvent`.
 */
export class VoicePipeline implements PipelineInput {
  readonly #deps: VoicePipelineDeps
  readonly #tm: TurnManagerOptions
  readonly #now: () => number
  readonly #caller: CallerAudio | undefined
  readonly #turns: TurnTaking
  readonly #queue = new ReplyQueue()
  readonly #replies: Replies
  #closed = false
  readonly #noticed = new Set<string>()

  constructor(deps: VoicePipelineDeps) {
    this.#deps = deps
    const tm = deps.config.plugins.find((p) => p.use === 'turn_manager')
    if (tm?.use !== 'turn_manager') throw new Error('pipeline config has no turn_manager')
    this.#tm = tm.options
    this.#now = deps.now ?? (() => performance.now())
    const pushToTalkMode = this.#tm.trigger === 'push_to_talk'
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
    this.#turns = new TurnTaking({
      turnManager: this.#tm,
      words: wordRulesOf(deps.config, this.#tm, deps.context.fromPhoneNumber, deps.stt !== undefined),
      sttTurns: deps.config.vad.enabled === false && !pushToTalkMode,
      stt: deps.stt,
      replies: {
        active: () => this.#isAssistantActive(),
        canInterrupt: () => this.#canInterrupt(),
        stop: (announce) => this.#replies.interrupt(announce),
        pause: () => this.#replies.pause(),
        resume: () => this.#replies.resume(),
        committed: (turn, text, userEnd) => this.#userTurnCommitted(turn, text, userEnd),
      },
      caller: () => this.#caller,
      emit: (e) => deps.emit(e),
      hooks: deps.hooks,
      logger: deps.logger,
      notice: (code, message) => this.#notice(code, message),
      now: this.#now,
    })
    if (deps.audio !== undefined) {
      this.#caller = new CallerAudio({
        format: deps.audio.input,
        vad: deps.config.vad,
        useVad: !pushToTalkMode,
        stt: deps.stt,
        createVad: deps.createVad,
        logger: deps.logger,
        sendToStt: () => this.#turns.sttGate(),
        onSpeechStart: () => this.#turns.speechStarted(),
        onSpeechEnd: () => this.#turns.speechEnded(),
        onMisfire: () => this.#turns.misfire(),
      })
    }
    deps.signal.addEventListener('abort', () => this.close(), { once: true })
  }

  /** Starts the STT and TTS loops and the welcome turn. */
  start(): void {
    startVendorLoops({
      ...this.#deps,
      wantsStt: this.#deps.config.plugins.some((p) => p.use.startsWith('stt.')),
      turns: this.#turns,
      replies: this.#replies,
      closed: () => this.#closed,
      notice: (code, message) => this.#notice(code, message),
      sttTurnFailed: (cause) => this.#sttTurnFailed(cause),
    })
    if (this.#deps.agent.handles.has('welcome'))
      this.#startAssistant({ kind: 'welcome', turnId: this.#deps.welcomeTurnId ?? newTurnId('assistant') }, null, {})
  }

  // ---- PipelineInput -------------------------------------------------------------------------------------

  pushAudio(chunk: Buffer): void {
    if (!this.#closed) this.#caller?.push(chunk)
  }

  clientVad(event: 'vad_start' | 'vad_end' | 'vad_model_failed'): void {
    this.#turns.clientVad(event)
  }

  pushToTalk(pressed: boolean): void {
    this.#turns.pushToTalk(pressed)
  }

  userText(text: string): void {
    this.#turns.userText(text)
  }

  userData(data: unknown, options?: { readonly speakReply?: boolean }): void {
    if (this.#closed) return
    if (!this.#deps.agent.handles.has('data')) {
      this.#deps.logger.debug({}, 'client data not relayed: the agent does not take data events')
      return
    }
    const turnId = this.#replies.active?.turnId ?? this.#turns.user?.turnId ?? newTurnId('data')
    void relayData(this.#deps.agent, { ...this.#deps.context }, turnId, data, {
      emit: (e) => this.#deps.emit(e),
      speak: (text, hangup) => {
        if (options?.speakReply !== false) return this.#speakDataReply(text, hangup)
        this.#deps.logger.info({ chars: text.length, hangup }, 'data reply not spoken: the caller is not with the agent')
      },
      logger: this.#deps.logger,
      signal: this.#deps.signal,
    })
  }

  /** The recognizer lost what the caller said (`cause`: the error's code and status, never a body): the fallback. */
  #sttTurnFailed(cause: string): void {
    if (this.#closed) return
    const fallback = replySafetyOf(this.#deps.config)?.fallback.messages[0]
    if (this.#isAssistantActive()) {
      if (fallback !== undefined) this.#queue.holdSpeech(fallback, false)
    } else if (this.#replies.sttFailed(newTurnId('assistant'), cause)) this.#turns.resetBargeIn()
  }

  /** A data reply had text to speak: it gets an assistant turn of its own, after the reply in progress if any. */
  #speakDataReply(text: string, hangup: boolean): void {
    if (this.#closed) return
    if (this.#isAssistantActive()) {
      this.#queue.holdSpeech(text, hangup)
      return
    }
    this.#turns.resetBargeIn()
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
    const voicemail = this.#deps.config.voicemail_message
    if (machine && voicemail !== undefined) return this.#dropVoicemail(voicemail, verdict === 'machine_beep')
    if (this.#isAssistantActive()) {
      if (!machine || this.#replies.active?.hangup) {
        this.#queue.holdVerdict(request)
        return
      }
      // Words the greeting produced are not for the agent to answer now.
      this.#queue.takeWords()
      this.#replies.interrupt(() => undefined)
    }
    this.#startAssistant(request, null, {})
  }

  /**
   * The agent's `voicemail_message` instead of asking it: whatever is being said stops (it would talk over the
   * greeting), and after the beep the message is said and the call hangs up. Before the beep, the pipeline waits.
   */
  #dropVoicemail(message: string, beep: boolean): void {
    if (this.#isAssistantActive()) {
      this.#queue.takeWords()
      this.#replies.interrupt(() => undefined)
    }
    if (!beep) return
    this.#turns.resetBargeIn()
    this.#replies.speak(newTurnId('assistant'), message, true)
  }

  /**
   * A warm transfer failed and the caller is back: the agent is asked (`transfer.failed`) like a turn, after the
   * reply in progress if any; a reply with nothing to say gets `defaultLine` instead.
   */
  transferFailed(failure: { reason: string; to: string; defaultLine: string | undefined }): void {
    if (this.#closed) return
    const request = { kind: 'transfer_failed' as const, turnId: newTurnId('assistant'), reason: failure.reason, to: failure.to }
    const held = { ...request, defaultLine: failure.defaultLine }
    if (this.#isAssistantActive()) {
      this.#queue.holdVerdict(held)
      return
    }
    this.#startAssistant(held, null, {})
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
    const user = this.#turns.close()
    this.#replies.close()
    const unanswered = [this.#queue.takeWords()?.text, user?.text()].filter((t) => t !== undefined && t !== '').join(' ')
    if (unanswered !== '') {
      const none = { totalMs: null, agentMs: null, ttsMs: null, gatewayMs: null }
      this.#deps.hooks.turnCompleted({
        turnId: user?.turnId ?? newTurnId('user'),
        timestamp: new Date(),
        userMessage: unanswered,
        assistantMessage: null,
        latencyMs: null,
        latency: none,
        latencyBreakdown: null,
        latencyOrigin: null,
        interrupted: false,
        failure: null,
        turnEnd: null,
      })
    }
    this.#caller?.close()
    void this.#deps.stt?.close()
    void this.#deps.tts?.close()
  }

  // ---- between the steps ---------------------------------------------------------------------------------

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

  /** Turn taking ended a user turn: answer it, or hold it behind a reply that may not be interrupted. */
  #userTurnCommitted(turn: UserTurn, text: string, userEnd: UserEnd): void {
    if (this.#replies.active?.hangup) {
      // Words said over the farewell are never answered; announcing them would make a browser stop the farewell.
      // They are kept, and stored with the transcript when the session ends.
      this.#queue.holdWords(text, userEnd)
      return
    }
    if (this.#isAssistantActive()) {
      // The reply may not be interrupted: the user's words wait for it to be heard, and so does their turn, whose
      // `turn.start` would make a browser SDK stop playing the reply.
      this.#queue.holdWords(text, userEnd, turn)
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

  #startAssistant(
    request: (AgentRequest & { kind: 'welcome' | 'message' | 'machine_detection' }) | MachineVerdictRequest,
    userText: string | null,
    userEnd: UserEnd,
  ): void {
    this.#turns.resetBargeIn()
    if (request.kind === 'transfer_failed') {
      const { defaultLine, ...asked } = request
      this.#replies.start(asked, userText, userEnd, defaultLine)
      return
    }
    this.#replies.start(request, userText, userEnd)
  }

  /**
   * A reply is over: hang up after a farewell, speak what a data reply had to say, or answer what the user said
   * while the reply could not be interrupted.
   */
  #replyFinished(a: AssistantTurn): void {
    this.#turns.resetBargeIn()
    if (a.hangup && !a.interrupted) {
      this.#deps.emit({ type: 'hangup', reason: 'agent_hangup' })
      return
    }
    if (a.transfer !== undefined && !a.interrupted) {
      // The session asks the carrier; the call ends there, or a failure comes back through callControlFailed.
      this.#deps.emit({ type: 'transfer', turnId: a.turnId, ...a.transfer })
    }
    const verdict = this.#queue.takeVerdict()
    if (verdict !== undefined && !this.#closed) {
      this.#startAssistant(verdict, null, {})
      return
    }
    const speech = this.#queue.takeSpeech()
    if (speech && a.interrupted) {
      // The user took the turn: the conversation has moved on from what the data reply wanted to say.
      this.#deps.logger.debug({}, 'speech from a data reply dropped: the user interrupted')
    } else if (speech && !this.#closed) {
      this.#speakDataReply(speech.text, speech.hangup)
      return
    }
    const queued = this.#closed ? undefined : this.#queue.takeWords()
    if (queued) {
      // The reply has been heard: now the user turns said over it may be announced, then answered.
      for (const held of queued.turns) this.#endUserTurn(held.turn, held.text)
      this.#startAssistant({ kind: 'message', turnId: newTurnId('assistant'), text: queued.text }, queued.text, queued.userEnd)
      return
    }
    // The user is still speaking as the reply ends: their turn can be announced now.
    const user = this.#turns.user
    if (user !== undefined && !this.#closed && (this.#turns.speaking || user.text() !== '')) user.announce()
  }

  #notice(code: string, message: string): void {
    if (this.#noticed.has(code)) return
    this.#noticed.add(code)
    this.#deps.logger.warn({ code }, message)
    this.#deps.emit({ type: 'notice', code, message })
  }
}
