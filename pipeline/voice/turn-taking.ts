import type { TurnManagerOptions } from '../options/turn-manager-options.js'
import type { PipelineLogger } from '../runtime/logger.js'
import type { SttEvent, SttStream, SttWord } from '../vendors/stt/stt-stream.js'
import type { BackchannelList } from '../turn-rules/backchannels.js'
import type { TurnEndJudge, TurnEndJudgement, TurnEndReason } from '../turn-rules/turn-end-judge.js'
import type { UserEnd } from './assistant-turn.js'
import { BargeInGate, type HeardWords } from './barge-in.js'
import type { PipelineEvent, PipelineHooks } from './pipeline-io.js'
import { newTurnId } from './turn-ids.js'
import { UserTurn } from './user-turn.js'

/** What turn taking needs to know of the reply side, and where a finished user turn goes. */
export interface ReplySide {
  /** A reply is in progress (not yet heard in full). */
  active(): boolean
  /** The reply in progress may be interrupted now. */
  canInterrupt(): boolean
  /** Stops the reply in progress; `announce` tells the user's turn before the reply's end. */
  stop(announce: () => void): void
  /** Pauses the reply's playout where it is (caller speech whose words are awaited). */
  pause(): void
  /** Resumes a paused reply's playout where it paused; nothing when none is paused. */
  resume(): void
  /** A user turn is over with `text` (not empty): answer it, or hold it behind the reply in progress. */
  committed(turn: UserTurn, text: string, userEnd: UserEnd): void
}

/** The rules that read the caller's words: when a turn is over, and what is only a backchannel. */
export interface WordRules {
  judge: TurnEndJudge
  /** Undefined: nothing is a backchannel (an empty list, or no STT to read words from). */
  backchannels: BackchannelList | undefined
}

/** What turn taking is built from. */
export interface TurnTakingDeps {
  turnManager: TurnManagerOptions
  words: WordRules
  /** VAD off (and no push-to-talk): the STT's speech events and end of turn delimit user turns. */
  sttTurns: boolean
  stt: SttStream | undefined
  replies: ReplySide
  /** The caller's audio step (undefined without audio), which places the STT's words on the recording's timeline. */
  caller(): { callerWords(words: readonly SttWord[]): SttWord[] } | undefined
  emit(event: PipelineEvent): void
  hooks: PipelineHooks
  logger: PipelineLogger
  notice(code: string, message: string): void
  now(): number
}

/**
 * The user side of the conversation, the step between the caller's audio and the reply: it hears speech start and
 * end (from the VAD, the client's VAD, push-to-talk or the STT itself), collects the STT's words into the user turn
 * in progress, times barge-in, and commits the turn when the vendor's end of turn or a wait after the end of speech
 * says it is over. The words choose the wait (`TurnEndJudge`): longer while a number or a sentence is unfinished
 * (and the vendor's end of turn is not taken then), shorter after a complete short answer. A backchannel said over
 * the agent neither interrupts it nor becomes a turn.
 */
export class TurnTaking {
  readonly #d: TurnTakingDeps
  readonly #tm: TurnManagerOptions
  readonly #pushToTalkMode: boolean
  readonly #bargeIn: BargeInGate
  #user: UserTurn | undefined
  #commitTimer: NodeJS.Timeout | undefined
  /** The judgement the commit timer was set by (its reason is recorded if the timer ends the turn). */
  #pending: TurnEndJudgement | undefined
  /** With `sttTurns`: fires `base_timeout_ms` after the STT last heard speech or words. */
  #quietTimer: NodeJS.Timeout | undefined
  #lastHeardAt = 0
  #speaking = false
  #pttPressed = false
  #closed = false

  constructor(d: TurnTakingDeps) {
    this.#d = d
    this.#tm = d.turnManager
    this.#pushToTalkMode = this.#tm.trigger === 'push_to_talk'
    this.#bargeIn = new BargeInGate(
      {
        allowInterruptions: this.#tm.allow_interruptions,
        minInterruptionMs: this.#tm.min_interruption_ms,
        // An STT reports when speech starts but not when a cough is over: without a VAD, barge-in needs a word.
        minInterruptionWords: d.sttTurns ? Math.max(1, this.#tm.min_interruption_words) : this.#tm.min_interruption_words,
        readWords: d.words.backchannels !== undefined,
      },
      // The reply may have become uninterruptible (a farewell) while the gate was timing the speech: it resumes.
      () => {
        if (this.#d.replies.canInterrupt()) this.interrupt()
        else this.#d.replies.resume()
      },
      () => this.#heard(),
      // A VAD's speech pauses the reply while its words are awaited. Without one, the STT's own speech start is all
      // there is: the words decide alone, as they come.
      d.sttTurns
        ? undefined
        : {
            pause: () => {
              if (this.#d.replies.canInterrupt()) this.#d.replies.pause()
            },
            resume: () => this.#d.replies.resume(),
          },
    )
  }

  /** The user turn in progress, if any. */
  get user(): UserTurn | undefined {
    return this.#user
  }

  /** Whether the user is speaking now. */
  get speaking(): boolean {
    return this.#speaking
  }

  /** Push-to-talk override of what reaches STT: the button while it decides, undefined to follow the VAD gate. */
  sttGate(): boolean | undefined {
    return this.#pushToTalkMode ? this.#pttPressed : undefined
  }

  /** A new reply starts or one ended: barge-in timing starts over. */
  resetBargeIn(): void {
    this.#bargeIn.reset()
  }

  /** The client's own VAD heard speech start or end. */
  clientVad(event: 'vad_start' | 'vad_end' | 'vad_model_failed'): void {
    if (this.#pushToTalkMode || this.#closed) return
    if (event === 'vad_start') this.speechStarted()
    else if (event === 'vad_end') this.speechEnded()
  }

  /** The push-to-talk button went down (a turn starts, interrupting the reply when it may) or up (speech ends). */
  pushToTalk(pressed: boolean): void {
    if (this.#closed || pressed === this.#pttPressed) return
    this.#pttPressed = pressed
    if (pressed) {
      // An explicit press is never a false barge-in.
      if (this.#d.replies.active() && this.#d.replies.canInterrupt()) this.interrupt()
      this.#ensureUserTurn(true)
      this.#d.hooks.userActivity()
    } else {
      this.speechEnded()
    }
  }

  /** Typed text: a user turn of its own (or the end of the one in progress). */
  userText(text: string): void {
    const t = text.trim()
    if (this.#closed || t === '') return
    this.#d.hooks.userActivity()
    const turn = this.#ensureUserTurn(!this.#d.replies.active() || this.#d.replies.canInterrupt())
    turn.addFinal(t)
    this.#commitUserTurn(undefined, 'typed')
  }

  /** Barge-in: the reply stops and the user's turn is announced (which tells a browser to stop playing). */
  interrupt(userTurn: UserTurn | undefined = this.#user): void {
    this.#d.replies.stop(() => (userTurn ?? this.#ensureUserTurn(false)).announce())
  }

  /** Stops the timers; the user turn in progress is handed back (its words are unanswered) and forgotten. */
  close(): UserTurn | undefined {
    this.#closed = true
    this.#clearCommit()
    clearTimeout(this.#quietTimer)
    this.#bargeIn.reset()
    const user = this.#user
    this.#user = undefined
    return user
  }

  /** The user turn in progress, created (and announced when `announce`) if there is none. */
  #ensureUserTurn(announce: boolean): UserTurn {
    if (this.#user === undefined) {
      this.#user = new UserTurn(newTurnId('user'), this.#d.now(), (e) => this.#d.emit(e))
    }
    if (announce) this.#user.announce()
    return this.#user
  }

  /** The user started speaking (VAD, client VAD or the STT): a user turn opens, or barge-in timing starts. */
  speechStarted(): void {
    if (this.#speaking || this.#closed) return
    this.#speaking = true
    this.#clearCommit()
    this.#d.hooks.userActivity()
    const active = this.#d.replies.active()
    // During an assistant turn the user turn is announced only once it counts as a barge-in.
    this.#ensureUserTurn(!active)
    if (active) this.#bargeIn.speechStarted(this.#d.now(), this.#d.replies.canInterrupt())
  }

  /** The user stopped speaking: the STT is asked to finalize, and the turn commits at the latest `base_timeout_ms` later. */
  speechEnded(): void {
    if (!this.#speaking && !this.#pushToTalkMode) return
    this.#stopSpeaking()
    this.#d.stt?.finalize()
    // The vendor's end-of-turn normally commits the turn; this is the fallback.
    this.#commitLater()
  }

  /** The VAD's speech was too short to be speech. */
  misfire(): void {
    this.#speaking = false
    this.#bargeIn.speechEnded()
    if (this.#user && this.#user.text() === '' && !this.#pushToTalkMode) this.#commitLater()
  }

  /** The user stopped speaking now: barge-in timing stops and the user turn's speech ends here. */
  #stopSpeaking(): void {
    this.#speaking = false
    this.#bargeIn.speechEnded()
    if (this.#user) this.#user.speechEndedAt = this.#d.now()
  }

  /**
   * Commits the user turn after the wait its words call for (counted from the end of speech) unless something
   * commits it first; called again as words come, so the latest words choose.
   */
  #commitLater(): void {
    clearTimeout(this.#commitTimer)
    const judgement = this.#judge()
    this.#pending = judgement
    const from = this.#user?.speechEndedAt ?? this.#d.now()
    const wait = Math.max(0, from + judgement.waitMs - this.#d.now())
    this.#commitTimer = setTimeout(() => this.#commitUserTurn(undefined, judgement.reason), wait)
    this.#commitTimer.unref()
  }

  #clearCommit(): void {
    clearTimeout(this.#commitTimer)
    this.#commitTimer = undefined
    this.#pending = undefined
  }

  /** The words so far as the end-of-turn rules read them (push-to-talk: the release ends the turn, at the base wait). */
  #judge(vendorText?: string): TurnEndJudgement {
    if (this.#pushToTalkMode) return { waitMs: this.#tm.base_timeout_ms, reason: 'base_timeout', vendorMayEnd: true }
    return this.#d.words.judge.judge(this.#user?.complete(vendorText) ?? vendorText ?? '')
  }

  /** New words came: barge-in may now decide, and a pending end of turn is timed again by them. */
  #wordsChanged(): void {
    this.#bargeIn.wordsChanged()
    if (this.#pending !== undefined && !this.#speaking) this.#commitLater()
  }

  /** What the caller's words so far say, for the barge-in gate. */
  #heard(): HeardWords {
    const text = this.#user?.text(true) ?? ''
    const count = this.#user?.wordCount ?? 0
    if (count === 0) return { count, kind: 'nothing' }
    return { count, kind: this.#d.words.backchannels?.mayBe(text) ? 'backchannel' : 'words' }
  }

  /** One event of the session's STT stream. */
  onSttEvent(e: SttEvent): void {
    switch (e.type) {
      case 'speech_started':
        if (this.#d.sttTurns) this.#sttHeard()
        break
      case 'interim':
        if (this.#d.sttTurns) this.#sttHeard()
        this.#ensureUserTurn(!this.#d.replies.active()).addInterim(e.text)
        this.#wordsChanged()
        break
      case 'final':
        if (this.#d.sttTurns) this.#sttHeard()
        {
          const caller = this.#d.caller()
          if (e.words !== undefined && caller !== undefined) this.#d.hooks.sttWords?.(caller.callerWords(e.words))
        }
        this.#ensureUserTurn(!this.#d.replies.active()).addFinal(e.text)
        this.#wordsChanged()
        break
      case 'end_of_turn':
        if (this.#pushToTalkMode) {
          if (this.#pttPressed) break
        } else if (this.#d.sttTurns) {
          this.#sttSpeechOver()
        } else if (this.#speaking) {
          break // the VAD still hears speech: wait for it
        }
        if (!this.#pushToTalkMode && !this.#judge(e.text).vendorMayEnd) {
          // The words say more is coming (a number half read out, a trailing "and"): the wait decides, not the vendor.
          this.#commitLater()
          break
        }
        this.#commitUserTurn(e.text, 'vendor_end_of_turn')
        break
      case 'reconnected':
        this.#user?.restart()
        break
      case 'error':
        this.#d.logger.warn({ code: e.code, fatal: e.fatal }, `speech recognition: ${e.message}`)
        if (e.fatal) this.#d.notice('stt_unavailable', 'speech recognition stopped working for this call: send text instead')
        break
    }
  }

  /** VAD off: the STT heard speech or words. The turn goes on until its end of turn or `base_timeout_ms` of quiet. */
  #sttHeard(): void {
    this.speechStarted()
    this.#lastHeardAt = this.#d.now()
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
      this.misfire()
      return
    }
    this.speechEnded()
    if (this.#user) this.#user.speechEndedAt = this.#lastHeardAt
  }

  /** VAD off: the STT ended the turn, so the user is no longer speaking. */
  #sttSpeechOver(): void {
    clearTimeout(this.#quietTimer)
    if (this.#speaking) this.#stopSpeaking()
  }

  /**
   * Ends the user turn with its text and hands it to the reply side (interrupting the reply when it may); a
   * backchannel said over the reply is dropped instead.
   */
  #commitUserTurn(vendorText: string | undefined, reason: TurnEndReason): void {
    this.#clearCommit()
    if (this.#closed) return
    // Not the vendor's end of turn: its answer to the finalize may still come, late, and must not end this turn again.
    if (vendorText === undefined) this.#d.stt?.turnEnded?.()
    const turn = this.#user ?? (vendorText?.trim() ? this.#ensureUserTurn(!this.#d.replies.active()) : undefined)
    if (turn === undefined) return
    const text = turn.complete(vendorText)
    this.#user = undefined
    if (text === '') return
    if (this.#d.replies.active() && this.#d.words.backchannels?.matches(text)) {
      this.#d.logger.debug({ turn_id: turn.turnId }, 'backchannel over the reply: not a turn')
      return
    }
    const userEndAt = turn.speechEndedAt ?? this.#d.now()
    const userEnd: UserEnd = { userEndAt, transcriptAt: this.#d.now(), reason }
    this.#d.hooks.usage({ transcriptionSeconds: Math.max(0, userEndAt - turn.startedAt) / 1000 })
    if (this.#d.replies.active() && this.#d.replies.canInterrupt()) this.interrupt(turn)
    this.#d.replies.committed(turn, text, userEnd)
  }
}
