import type { InputAudioFormat, OutputAudioFormat } from '../audio/audio-format.js'
import type { AgentContext, AgentStep, HistoryItem } from '../agent/agent-step.js'
import type { PipelineConfig } from '../config/schema.js'
import type { TurnManagerOptions } from '../options/turn-manager-options.js'
import type { SttStream } from '../vendors/stt/stt-stream.js'
import type { TtsStream } from '../vendors/tts/tts-stream.js'
import type { PipelineLogger } from '../runtime/logger.js'
import { newTurnId } from './turn-ids.js'
import { CallerAudio, type VadFactory } from './caller-audio.js'
import { relayData } from './data-relay.js'
import type { PipelineEvent, PipelineHooks, PipelineInput } from './pipeline-io.js'
import { Replies } from './replies.js'
import { replySafetyOf } from './reply-safety.js'
import { ReplySequencer } from './reply-sequencer.js'
import { TurnTaking } from './turn-taking.js'
import { wordRulesOf } from './word-rules.js'
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
 * 3. what is said next (`ReplySequencer`): the answer to a turn, a data reply's speech, a machine detection verdict
 *    or a failed transfer, each waiting behind a reply in progress that may not be interrupted;
 * 4. the agent step and TTS (`Replies`, with `ReplyRequests` and `ReplySpeech`): one reply at a time, its text
 *    streamed to TTS as it arrives;
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
  readonly #replies: Replies
  readonly #next: ReplySequencer
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
      onFinished: (a) => this.#next.replyFinished(a),
      safety: replySafetyOf(deps.config),
    })
    this.#next = new ReplySequencer({
      config: deps.config,
      replies: this.#replies,
      turns: () => this.#turns,
      emit: (e) => deps.emit(e),
      logger: deps.logger,
      closed: () => this.#closed,
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
        committed: (turn, text, userEnd) => this.#next.userTurnCommitted(turn, text, userEnd),
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
      sttTurnFailed: (cause) => this.#next.sttTurnFailed(cause),
    })
    if (this.#deps.agent.handles.has('welcome'))
      this.#next.start({ kind: 'welcome', turnId: this.#deps.welcomeTurnId ?? newTurnId('assistant') }, null, {})
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
        if (options?.speakReply !== false) return this.#next.speakDataReply(text, hangup)
        this.#deps.logger.info({ chars: text.length, hangup }, 'data reply not spoken: the caller is not with the agent')
      },
      logger: this.#deps.logger,
      signal: this.#deps.signal,
    })
  }

  dtmf(digit: string): void {
    if (this.#closed) return
    this.#deps.hooks.userActivity()
    this.userData({ dtmf: digit })
  }

  /** Answering machine detection decided (an outbound call): the agent is asked like a turn. */
  machineVerdict(verdict: string): void {
    if (!this.#closed) this.#next.machineVerdict(verdict)
  }

  /** A warm transfer failed and the caller is back: the agent is asked (`transfer.failed`) like a turn. */
  transferFailed(failure: { reason: string; to: string; defaultLine: string | undefined }): void {
    if (!this.#closed) this.#next.transferFailed(failure)
  }

  callControlFailed(failure: { data: unknown; apology?: string | undefined }): void {
    if (this.#closed) return
    if (failure.apology !== undefined && failure.apology !== '') this.#next.speakDataReply(failure.apology, false)
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
    const unanswered = [this.#next.takeUnanswered(), user?.text()].filter((t) => t !== undefined && t !== '').join(' ')
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

  #notice(code: string, message: string): void {
    if (this.#noticed.has(code)) return
    this.#noticed.add(code)
    this.#deps.logger.warn({ code }, message)
    this.#deps.emit({ type: 'notice', code, message })
  }
}
