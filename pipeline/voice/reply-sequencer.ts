/**
 * What the agent says next, and when: the answer to a user's turn, a data reply's speech, a machine detection
 * verdict, a failed transfer, the fallback after a lost turn. Each waits (`ReplyQueue`) behind a reply in progress
 * that may not be interrupted, and is taken up when that reply is finished; a farewell ends the session instead.
 * The voice pipeline wires it between turn taking (which commits user turns) and the replies (which say when one is
 * over).
 */
import type { AgentRequest } from '../agent/agent-step.js'
import type { PipelineConfig } from '../config/schema.js'
import type { PipelineLogger } from '../runtime/logger.js'
import type { AssistantTurn, UserEnd } from './assistant-turn.js'
import type { PipelineEvent } from './pipeline-io.js'
import type { Replies } from './replies.js'
import { type MachineVerdictRequest, ReplyQueue } from './reply-queue.js'
import { replySafetyOf } from './reply-safety.js'
import { newTurnId } from './turn-ids.js'
import type { TurnTaking } from './turn-taking.js'
import type { UserTurn } from './user-turn.js'

/** A request that starts an assistant turn. */
type AssistantRequest = (AgentRequest & { kind: 'welcome' | 'message' | 'machine_detection' }) | MachineVerdictRequest

export interface ReplySequencerDeps {
  readonly config: PipelineConfig
  readonly replies: Replies
  /** Turn taking (built after this): its barge-in is reset whenever a reply starts or ends. */
  readonly turns: () => TurnTaking
  readonly emit: (event: PipelineEvent) => void
  readonly logger: PipelineLogger
  readonly closed: () => boolean
}

export class ReplySequencer {
  readonly #d: ReplySequencerDeps
  readonly #queue = new ReplyQueue()

  constructor(deps: ReplySequencerDeps) {
    this.#d = deps
  }

  /** Words no reply has answered yet (the session is closing), taken out of the queue. */
  takeUnanswered(): string | undefined {
    return this.#queue.takeWords()?.text
  }

  /** Starts an assistant turn now (the welcome, or what the queue held). */
  start(request: AssistantRequest, userText: string | null, userEnd: UserEnd): void {
    this.#d.turns().resetBargeIn()
    if (request.kind === 'transfer_failed') {
      const { defaultLine, ...asked } = request
      this.#d.replies.start(asked, userText, userEnd, defaultLine)
      return
    }
    this.#d.replies.start(request, userText, userEnd)
  }

  /** Turn taking ended a user turn: answer it, or hold it behind a reply that may not be interrupted. */
  userTurnCommitted(turn: UserTurn, text: string, userEnd: UserEnd): void {
    const active = this.#d.replies.active
    if (active?.hangup) {
      // Words said over the farewell are never answered; announcing them would make a browser stop the farewell.
      // They are kept, and stored with the transcript when the session ends.
      this.#queue.holdWords(text, userEnd)
      return
    }
    if (active !== undefined) {
      // The reply may not be interrupted: the user's words wait for it to be heard, and so does their turn, whose
      // `turn.start` would make a browser SDK stop playing the reply.
      this.#queue.holdWords(text, userEnd, turn)
      return
    }
    this.#endUserTurn(turn, text)
    this.start({ kind: 'message', turnId: newTurnId('assistant'), text }, text, userEnd)
  }

  /** A data reply had text to speak: it gets an assistant turn of its own, after the reply in progress if any. */
  speakDataReply(text: string, hangup: boolean): void {
    if (this.#d.closed()) return
    if (this.#d.replies.active !== undefined) {
      this.#queue.holdSpeech(text, hangup)
      return
    }
    this.#d.turns().resetBargeIn()
    this.#d.replies.speak(newTurnId('assistant'), text, hangup)
  }

  /** The recognizer lost what the caller said (`cause`: the error's code and status, never a body): the fallback. */
  sttTurnFailed(cause: string): void {
    if (this.#d.closed()) return
    const fallback = replySafetyOf(this.#d.config)?.fallback.messages[0]
    if (this.#d.replies.active !== undefined) {
      if (fallback !== undefined) this.#queue.holdSpeech(fallback, false)
    } else if (this.#d.replies.sttFailed(newTurnId('assistant'), cause)) this.#d.turns().resetBargeIn()
  }

  /**
   * Answering machine detection decided (an outbound call): the agent is asked like a turn. For a machine, the
   * reply in progress (the welcome, talking over a greeting) stops at once, so the agent's message follows the
   * beep; for a person, the question waits for the reply in progress to finish.
   */
  machineVerdict(verdict: string): void {
    const request = { kind: 'machine_detection' as const, turnId: newTurnId('assistant'), answeredBy: verdict }
    const machine = verdict === 'machine' || verdict === 'machine_beep'
    const voicemail = this.#d.config.voicemail_message
    if (machine && voicemail !== undefined) return this.#dropVoicemail(voicemail, verdict === 'machine_beep')
    const active = this.#d.replies.active
    if (active !== undefined) {
      if (!machine || active.hangup) {
        this.#queue.holdVerdict(request)
        return
      }
      // Words the greeting produced are not for the agent to answer now.
      this.#queue.takeWords()
      this.#d.replies.interrupt(() => undefined)
    }
    this.start(request, null, {})
  }

  /**
   * A warm transfer failed and the caller is back: the agent is asked (`transfer.failed`) like a turn, after the
   * reply in progress if any; a reply with nothing to say gets `defaultLine` instead.
   */
  transferFailed(failure: { reason: string; to: string; defaultLine: string | undefined }): void {
    const request = { kind: 'transfer_failed' as const, turnId: newTurnId('assistant'), reason: failure.reason, to: failure.to }
    const held = { ...request, defaultLine: failure.defaultLine }
    if (this.#d.replies.active !== undefined) {
      this.#queue.holdVerdict(held)
      return
    }
    this.start(held, null, {})
  }

  /**
   * A reply is over: hang up after a farewell, speak what a data reply had to say, or answer what the user said
   * while the reply could not be interrupted.
   */
  replyFinished(a: AssistantTurn): void {
    const turns = this.#d.turns()
    const closed = this.#d.closed()
    turns.resetBargeIn()
    if (a.hangup && !a.interrupted) {
      this.#d.emit({ type: 'hangup', reason: 'agent_hangup' })
      return
    }
    if (a.transfer !== undefined && !a.interrupted) {
      // The session asks the carrier; the call ends there, or a failure comes back through callControlFailed.
      this.#d.emit({ type: 'transfer', turnId: a.turnId, ...a.transfer })
    }
    const verdict = this.#queue.takeVerdict()
    if (verdict !== undefined && !closed) {
      this.start(verdict, null, {})
      return
    }
    const speech = this.#queue.takeSpeech()
    if (speech && a.interrupted) {
      // The user took the turn: the conversation has moved on from what the data reply wanted to say.
      this.#d.logger.debug({}, 'speech from a data reply dropped: the user interrupted')
    } else if (speech && !closed) {
      this.speakDataReply(speech.text, speech.hangup)
      return
    }
    const queued = closed ? undefined : this.#queue.takeWords()
    if (queued) {
      // The reply has been heard: now the user turns said over it may be announced, then answered.
      for (const held of queued.turns) this.#endUserTurn(held.turn, held.text)
      this.start({ kind: 'message', turnId: newTurnId('assistant'), text: queued.text }, queued.text, queued.userEnd)
      return
    }
    // The user is still speaking as the reply ends: their turn can be announced now.
    const user = turns.user
    if (user !== undefined && !closed && (turns.speaking || user.text() !== '')) user.announce()
  }

  /**
   * The agent's `voicemail_message` instead of asking it: whatever is being said stops (it would talk over the
   * greeting), and after the beep the message is said and the call hangs up. Before the beep, the pipeline waits.
   */
  #dropVoicemail(message: string, beep: boolean): void {
    if (this.#d.replies.active !== undefined) {
      this.#queue.takeWords()
      this.#d.replies.interrupt(() => undefined)
    }
    if (!beep) return
    this.#d.turns().resetBargeIn()
    this.#d.replies.speak(newTurnId('assistant'), message, true)
  }

  /** Tells the client a user turn is over: its `turn.start` (and words) if not sent yet, the transcript, the end. */
  #endUserTurn(turn: UserTurn, text: string): void {
    turn.announce()
    this.#d.emit({ type: 'user.transcript', turnId: turn.turnId, content: text })
    this.#d.emit({ type: 'turn.end', role: 'user', turnId: turn.turnId })
  }
}
