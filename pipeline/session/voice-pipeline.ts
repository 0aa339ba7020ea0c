import type { AgentContext, AgentRequest, AgentStep, HistoryItem } from '../agent/agent-step.js'
import type { PipelineConfig } from '../config/schema.js'
import type { TurnManagerOptions } from '../config/turn-manager-options.js'
import type { SttStream } from '../stt/stt-stream.js'
import type { TtsStream } from '../tts/tts-stream.js'
import type { PipelineLogger } from '../util/logger.js'
import { newTurnId } from '../util/turn-ids.js'
import { AssistantTurn, type TurnLatency } from '../turn/assistant-turn.js'
import { BargeInGate } from '../turn/barge-in.js'
import { UserTurn } from '../turn/user-turn.js'
import { CallerAudio, type VadFactory } from './caller-audio.js'
import type { InputAudioFormat, OutputAudioFormat, PipelineEvent, PipelineInput } from './pipeline-io.js'

/** A finished exchange, for the transcript. */
export interface CompletedTurn {
  turnId: string
  timestamp: Date
  userMessage: string | null
  assistantMessage: string | null
  latencyMs: number | null
  latency: TurnLatency
  interrupted: boolean
}

/** What the pipeline reports to its session. */
export interface PipelineHooks {
  turnCompleted(turn: CompletedTurn): void
  /** The user spoke, typed or pressed a key (silence timeout). */
  userActivity(): void
  /** Seconds of user speech transcribed / of speech generated. */
  usage(u: { transcriptionSeconds?: number; ttsSeconds?: number }): void
}

/** Everything a pipeline is built from; the gateway creates the streams from the validated config. */
export interface VoicePipelineDeps {
  config: PipelineConfig
  /** The transport's audio formats; undefined for a text-only transport. */
  audio: { input: InputAudioFormat; output: OutputAudioFormat } | undefined
  context: Omit<AgentContext, 'history'> & { history: HistoryItem[] }
  agent: AgentStep
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

const BYTES_PER_MS: Record<OutputAudioFormat, number> = { ulaw_8000: 8, pcm_16000: 32 }
/** After a reply's audio should have been heard, how long to wait for the transport's reports before moving on. */
const PLAYBACK_REPORT_GRACE_MS = 3_000

/**
 * One session's voice loop: caller audio -> VAD -> STT -> turn taking -> agent step -> TTS -> audio out, with
 * barge-in, push-to-talk and the welcome turn. Transport-agnostic: it speaks only `PipelineInput` and
 * `PipelineEvent`.
 */
export class VoicePipeline implements PipelineInput {
  private readonly tm: TurnManagerOptions
  private readonly now: () => number
  private readonly caller: CallerAudio | undefined
  private readonly bargeIn: BargeInGate
  private readonly pushToTalkMode: boolean
  private user: UserTurn | undefined
  private assistant: AssistantTurn | undefined
  private pending: { text: string; userEndAt: number } | undefined
  private commitTimer: NodeJS.Timeout | undefined
  private speaking = false
  private pttPressed = false
  private chunkSeq = 0
  private closed = false
  private readonly noticed = new Set<string>()

  constructor(private readonly deps: VoicePipelineDeps) {
    const tm = deps.config.plugins.find((p) => p.use === 'turn_manager')
    if (tm?.use !== 'turn_manager') throw new Error('pipeline config has no turn_manager')
    this.tm = tm.options
    this.now = deps.now ?? (() => performance.now())
    this.pushToTalkMode = this.tm.trigger === 'push_to_talk'
    this.bargeIn = new BargeInGate(
      { allowInterruptions: this.tm.allow_interruptions, minInterruptionMs: this.tm.min_interruption_ms, minInterruptionWords: this.tm.min_interruption_words },
      () => this.interrupt(),
      () => this.user?.wordCount ?? 0,
    )
    if (deps.audio !== undefined) {
      this.caller = new CallerAudio({
        format: deps.audio.input,
        vad: deps.config.vad,
        useVad: !this.pushToTalkMode,
        stt: deps.stt,
        createVad: deps.createVad,
        logger: deps.logger,
        sendToStt: () => (this.pushToTalkMode ? this.pttPressed : undefined),
        onSpeechStart: () => this.speechStarted(),
        onSpeechEnd: () => this.speechEnded(),
        onMisfire: () => this.misfire(),
      })
    }
    deps.signal.addEventListener('abort', () => this.close(), { once: true })
  }

  /** Starts the STT and TTS loops and the welcome turn. */
  start(): void {
    if (this.deps.audio !== undefined && this.deps.stt === undefined && this.deps.config.plugins.some((p) => p.use.startsWith('stt.'))) {
      this.notice('stt_not_configured', 'speech recognition is not configured on this gateway (no STT vendor key): send text instead')
    }
    if (this.deps.stt) void this.sttLoop(this.deps.stt)
    if (this.deps.tts) void this.ttsLoop(this.deps.tts)
    if (this.deps.agent.handles.has('welcome')) this.startAssistant({ kind: 'welcome', turnId: newTurnId('assistant') }, null, undefined)
  }

  // ---- PipelineInput -------------------------------------------------------------------------------------

  pushAudio(chunk: Buffer): void {
    if (!this.closed) this.caller?.push(chunk)
  }

  clientVad(event: 'vad_start' | 'vad_end' | 'vad_model_failed'): void {
    if (this.pushToTalkMode || this.closed) return
    if (event === 'vad_start') this.speechStarted()
    else if (event === 'vad_end') this.speechEnded()
  }

  pushToTalk(pressed: boolean): void {
    if (this.closed || pressed === this.pttPressed) return
    this.pttPressed = pressed
    if (pressed) {
      // An explicit press is never a false barge-in.
      if (this.isAssistantActive() && this.canInterrupt()) this.interrupt()
      this.ensureUserTurn(true)
      this.deps.hooks.userActivity()
    } else {
      this.speechEnded()
    }
  }

  userText(text: string): void {
    const t = text.trim()
    if (this.closed || t === '') return
    this.deps.hooks.userActivity()
    const turn = this.ensureUserTurn(!this.isAssistantActive() || this.canInterrupt())
    turn.addFinal(t)
    this.commitUserTurn(undefined)
  }

  userData(data: unknown): void {
    if (this.closed) return
    if (!this.deps.agent.handles.has('data')) {
      this.deps.logger.debug({}, 'client data not relayed: the agent does not take data events')
      return
    }
    void this.relayData(data)
  }

  dtmf(digit: string): void {
    if (this.closed) return
    this.deps.hooks.userActivity()
    this.userData({ dtmf: digit })
  }

  markPlayed(chunkId: number): void {
    const a = this.assistant
    if (a && a.playback.markPlayed(chunkId)) this.maybeFinishAssistant(a)
  }

  replayFinished(turnId: string): void {
    const a = this.assistant
    if (a && a.turnId === turnId) {
      a.playback.allPlayed()
      this.maybeFinishAssistant(a)
    }
  }

  /** Stops everything; idempotent. */
  close(): void {
    if (this.closed) return
    this.closed = true
    clearTimeout(this.commitTimer)
    this.bargeIn.reset()
    if (this.assistant) {
      clearTimeout(this.assistant.safetyTimer)
      this.assistant.abort.abort()
    }
    this.caller?.close()
    void this.deps.stt?.close()
    void this.deps.tts?.close()
  }

  // ---- user side ------------------------------------------------------------------------------------------

  private isAssistantActive(): boolean {
    return this.assistant !== undefined && !this.assistant.finished
  }

  private canInterrupt(): boolean {
    const a = this.assistant
    if (!this.tm.allow_interruptions) return false
    return !(a?.kind === 'welcome' && this.tm.disable_interruptions_during_welcome)
  }

  /** The user turn in progress, created (and announced when `announce`) if there is none. */
  private ensureUserTurn(announce: boolean): UserTurn {
    if (this.user === undefined) {
      this.user = new UserTurn(newTurnId('user'), this.now(), (e) => this.deps.emit(e))
    }
    if (announce) this.user.announce()
    return this.user
  }

  private speechStarted(): void {
    if (this.speaking || this.closed) return
    this.speaking = true
    clearTimeout(this.commitTimer)
    this.deps.hooks.userActivity()
    const active = this.isAssistantActive()
    // During an assistant turn the user turn is announced only once it counts as a barge-in.
    this.ensureUserTurn(!active)
    if (active) this.bargeIn.speechStarted(this.now(), this.canInterrupt())
  }

  private speechEnded(): void {
    if (!this.speaking && !this.pushToTalkMode) return
    this.speaking = false
    this.bargeIn.speechEnded()
    if (this.user) this.user.speechEndedAt = this.now()
    this.deps.stt?.finalize()
    // The vendor's end-of-turn normally commits the turn; this is the fallback.
    clearTimeout(this.commitTimer)
    this.commitTimer = setTimeout(() => this.commitUserTurn(undefined), this.tm.base_timeout_ms)
    this.commitTimer.unref()
  }

  private misfire(): void {
    this.speaking = false
    this.bargeIn.speechEnded()
    if (this.user && this.user.text() === '' && !this.pushToTalkMode) {
      clearTimeout(this.commitTimer)
      this.commitTimer = setTimeout(() => this.commitUserTurn(undefined), this.tm.base_timeout_ms)
      this.commitTimer.unref()
    }
  }

  private async sttLoop(stt: SttStream): Promise<void> {
    try {
      for await (const e of stt) {
        if (this.closed) break
        switch (e.type) {
          case 'speech_started':
            if (this.deps.config.vad.enabled === false && !this.pushToTalkMode) this.speechStarted()
            break
          case 'interim':
            this.ensureUserTurn(!this.isAssistantActive()).addInterim(e.text)
            this.bargeIn.wordsChanged()
            break
          case 'final':
            this.ensureUserTurn(!this.isAssistantActive()).addFinal(e.text)
            this.bargeIn.wordsChanged()
            break
          case 'end_of_turn':
            if (this.speaking && !this.pushToTalkMode) break // the VAD still hears speech: wait for it
            if (this.pushToTalkMode && this.pttPressed) break
            this.commitUserTurn(e.text)
            break
          case 'reconnected':
            this.user?.restart()
            break
          case 'error':
            this.deps.logger.warn({ code: e.code, fatal: e.fatal }, `speech recognition: ${e.message}`)
            if (e.fatal) this.notice('stt_unavailable', 'speech recognition stopped working for this call: send text instead')
            break
        }
      }
    } catch (err) {
      this.deps.logger.error({ err }, 'speech recognition loop failed')
    }
  }

  /** Ends the user turn with its text and hands it to the agent (or queues it behind an uninterruptible reply). */
  private commitUserTurn(vendorText: string | undefined): void {
    clearTimeout(this.commitTimer)
    if (this.closed) return
    const turn = this.user ?? (vendorText?.trim() ? this.ensureUserTurn(!this.isAssistantActive()) : undefined)
    if (turn === undefined) return
    const text = turn.complete(vendorText)
    this.user = undefined
    if (text === '') return
    const userEndAt = turn.speechEndedAt ?? this.now()
    this.deps.hooks.usage({ transcriptionSeconds: Math.max(0, userEndAt - turn.startedAt) / 1000 })
    if (this.isAssistantActive() && this.canInterrupt()) this.interrupt(turn)
    turn.announce()
    this.deps.emit({ type: 'user.transcript', turnId: turn.turnId, content: text })
    this.deps.emit({ type: 'turn.end', role: 'user', turnId: turn.turnId })
    if (this.isAssistantActive()) {
      // The reply may not be interrupted: the user's words wait for it to finish.
      this.pending = { text: this.pending ? `${this.pending.text} ${text}` : text, userEndAt }
      return
    }
    this.startAssistant({ kind: 'message', turnId: newTurnId('assistant'), text }, text, userEndAt)
  }

  // ---- assistant side -------------------------------------------------------------------------------------

  private startAssistant(request: AgentRequest & { kind: 'welcome' | 'message' }, userText: string | null, userEndAt: number | undefined): void {
    const hasSpeech = this.deps.tts !== undefined && this.deps.audio !== undefined
    const a = new AssistantTurn(request.turnId, request.kind, userText, hasSpeech, this.deps.audio?.output === 'ulaw_8000')
    if (userEndAt !== undefined) a.timings.userEndAt = userEndAt
    this.assistant = a
    this.bargeIn.reset()
    this.deps.emit({ type: 'turn.start', role: 'assistant', turnId: a.turnId })
    void this.runAgent(a, request)
  }

  private async runAgent(a: AssistantTurn, request: AgentRequest): Promise<void> {
    // The turn's own controller, also aborted with the session (AbortSignal.any's composite signals can be
    // collected on Node 20 and then never fire).
    const signal = a.abort.signal
    const onSessionAbort = () => a.abort.abort()
    this.deps.signal.addEventListener('abort', onSessionAbort, { once: true })
    signal.addEventListener('abort', () => this.deps.signal.removeEventListener('abort', onSessionAbort), { once: true })
    const context: AgentContext = { ...this.deps.context, history: this.deps.context.history }
    try {
      for await (const e of this.deps.agent.respond(request, context, { signal })) {
        if (a.interrupted || this.closed) break
        switch (e.type) {
          case 'sent':
            a.timings.sentAt = this.now()
            break
          case 'first_byte':
            a.timings.firstByteAt = this.now()
            break
          case 'tts':
          case 'hangup':
            if (e.type === 'hangup') a.hangup = true
            if (e.text !== '') this.say(a, e.text)
            break
          case 'data':
            this.deps.emit({ type: 'data', turnId: a.turnId, content: e.content })
            break
          case 'error':
            this.deps.logger.warn({ code: e.code, turn_id: a.turnId }, `agent turn failed: ${e.message}`)
            break
          case 'end':
            break
        }
      }
    } catch (err) {
      if (!signal.aborted) this.deps.logger.error({ err, turn_id: a.turnId }, 'agent step failed')
    }
    this.deps.signal.removeEventListener('abort', onSessionAbort)
    if (a.interrupted || this.closed) return
    a.agentDone = true
    if (a.text.trim() !== '') this.deps.emit({ type: 'assistant.text', turnId: a.turnId, content: a.text.trim() })
    this.deps.emit({ type: 'response.end', turnId: a.turnId })
    if (!a.ttsDone) {
      if (a.text.trim() === '') a.ttsDone = true
      else this.deps.tts?.flush(a.turnId)
    }
    this.maybeFinishAssistant(a)
  }

  private say(a: AssistantTurn, text: string): void {
    a.timings.firstTextAt ??= this.now()
    const sep = a.text === '' || /\s$/.test(a.text) || /^\s/.test(text) ? '' : ' '
    a.text += sep + text
    this.deps.emit({ type: 'assistant.text.delta', turnId: a.turnId, content: sep + text })
    if (!a.ttsDone) this.deps.tts?.pushText(a.turnId, sep + text)
  }

  private async ttsLoop(tts: TtsStream): Promise<void> {
    const output = this.deps.audio?.output
    if (output === undefined) return
    try {
      for await (const e of tts) {
        if (this.closed) break
        const a = this.assistant
        if (e.type === 'audio') {
          if (!a || a.turnId !== e.contextId || a.interrupted) continue
          const durationMs = e.audio.length / BYTES_PER_MS[output]
          const chunkId = ++this.chunkSeq
          a.timings.firstAudioAt ??= this.now()
          a.playback.sent(chunkId, durationMs, this.now())
          this.deps.hooks.usage({ ttsSeconds: durationMs / 1000 })
          this.deps.emit({ type: 'audio', turnId: a.turnId, chunkId, audio: e.audio, durationMs })
        } else if (e.type === 'done') {
          if (a && a.turnId === e.contextId) {
            a.ttsDone = true
            this.maybeFinishAssistant(a)
          }
        } else if (e.type === 'error') {
          this.deps.logger.warn({ code: e.code, fatal: e.fatal }, `speech synthesis: ${e.message}`)
          if (a && (e.fatal || e.contextId === a.turnId)) {
            a.ttsDone = true
            this.maybeFinishAssistant(a)
          }
          if (e.fatal) this.notice('tts_unavailable', 'speech synthesis is unavailable for this call: replies come as text only')
        }
      }
    } catch (err) {
      this.deps.logger.error({ err }, 'speech synthesis loop failed')
    }
    // Without TTS any open turn can only finish text-wise.
    const a = this.assistant
    if (a && !a.ttsDone) {
      a.ttsDone = true
      this.maybeFinishAssistant(a)
    }
  }

  /** Finishes the turn once the reply is complete and the caller has heard it. */
  private maybeFinishAssistant(a: AssistantTurn): void {
    if (a.finished || a.interrupted || !a.agentDone || !a.ttsDone) return
    const now = this.now()
    if (!a.playback.isDone(now)) {
      // Re-check when the audio should have played out; a transport that never reports cannot stall the call.
      clearTimeout(a.safetyTimer)
      const heard = a.playback.heardMs(now)
      const wait = Math.max(50, a.playback.totalMs - heard) + PLAYBACK_REPORT_GRACE_MS
      a.safetyTimer = setTimeout(() => {
        a.playback.allPlayed()
        this.maybeFinishAssistant(a)
      }, wait)
      a.safetyTimer.unref()
      return
    }
    this.finishAssistant(a)
  }

  private finishAssistant(a: AssistantTurn): void {
    if (a.finished) return
    a.finished = true
    clearTimeout(a.safetyTimer)
    this.bargeIn.reset()
    const hasSpeech = this.deps.tts !== undefined && this.deps.audio !== undefined
    const said = a.transcriptText(this.now(), hasSpeech)
    const latency = a.latency()
    this.deps.context.history.push(...(a.userText ? [{ role: 'user' as const, text: a.userText }] : []))
    if (said !== '') this.deps.context.history.push({ role: 'assistant', text: said })
    this.deps.emit({ type: 'turn.end', role: 'assistant', turnId: a.turnId })
    this.deps.hooks.turnCompleted({
      turnId: a.turnId,
      timestamp: new Date(),
      userMessage: a.userText,
      assistantMessage: said === '' ? null : said,
      latencyMs: latency.totalMs === null ? null : Math.round(latency.totalMs),
      latency,
      interrupted: a.interrupted,
    })
    if (this.assistant === a) this.assistant = undefined
    if (a.hangup && !a.interrupted) {
      this.deps.emit({ type: 'hangup', reason: 'agent_hangup' })
      return
    }
    const queued = this.pending
    if (queued && !this.closed) {
      this.pending = undefined
      this.startAssistant({ kind: 'message', turnId: newTurnId('assistant'), text: queued.text }, queued.text, queued.userEndAt)
    }
  }

  /**
   * Barge-in: stop the reply now, clear the caller's playback, announce the user's turn (which tells a browser
   * to stop playing) and keep only what was heard in the transcript.
   */
  private interrupt(userTurn: UserTurn | undefined = this.user): void {
    const a = this.assistant
    if (!a || a.finished) return
    a.interrupted = true
    a.abort.abort()
    this.deps.tts?.cancel(a.turnId)
    this.deps.emit({ type: 'clear_playback', turnId: a.turnId })
    ;(userTurn ?? this.ensureUserTurn(false)).announce()
    this.finishAssistant(a)
  }

  private async relayData(data: unknown): Promise<void> {
    const turnId = this.assistant?.turnId ?? this.user?.turnId ?? newTurnId('data')
    try {
      for await (const e of this.deps.agent.respond({ kind: 'data', turnId, data }, { ...this.deps.context }, { signal: this.deps.signal })) {
        if (e.type === 'data') this.deps.emit({ type: 'data', turnId, content: e.content })
        else if (e.type === 'error') this.deps.logger.warn({ code: e.code }, `data event failed: ${e.message}`)
      }
    } catch (err) {
      if (!this.deps.signal.aborted) this.deps.logger.error({ err }, 'data relay failed')
    }
  }

  private notice(code: string, message: string): void {
    if (this.noticed.has(code)) return
    this.noticed.add(code)
    this.deps.logger.warn({ code }, message)
    this.deps.emit({ type: 'notice', code, message })
  }
}
