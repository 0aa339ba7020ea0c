/**
 * The warm transfer's state machine. Pure: inputs in, actions out, time from an injected clock; it does
 * no I/O and sets no timer (the driver arms one for `deadline()` and feeds `timeout` back).
 *
 *   idle -> dialling -> ringing -> answered -> whispering -> awaiting_acceptance -> bridged -> ended
 *                 \________\__________\___________\_________________\--> failed (typed reason)
 *
 * Decisions where the issue is silent:
 * - With `accept: "dtmf"` the human always hears the prompt `ACCEPT_PROMPT` after the whisper (alone when there is no
 *   whisper): a key nobody was asked to press is never pressed. A key pressed during the whisper counts.
 * - The first 1 or 2 in a DTMF input decides; other keys are ignored.
 * - The human hanging up after answering but before accepting is `declined`.
 * - A machine verdict at any time before the bridge is `voicemail` (an asynchronous verdict may come after answer).
 * - The timeout runs from dialling to acceptance: ringing, the whisper and the wait for a key all count.
 */
import type { WarmTransferAccept } from '../../core/warm-transfer-request.js'
import type {
  HumanLegProgress,
  TransferAction,
  TransferEndedBy,
  TransferFailureReason,
  TransferFact,
  TransferInput,
  TransferPhase,
} from './transfer-steps.js'

/** Said to the human after the whisper when a key must accept. */
export const ACCEPT_PROMPT = 'Press 1 to accept the call, or 2 to decline.'

/** What the machine needs to know of the request (a `WarmTransferRequest` has it). */
export interface WarmTransferPlan {
  readonly whisper: string | undefined
  readonly hold: string | undefined
  readonly accept: WarmTransferAccept
  readonly timeoutMs: number
}

const BEFORE_BRIDGE: ReadonlySet<TransferPhase> = new Set(['dialling', 'ringing', 'answered', 'whispering', 'awaiting_acceptance'])
const ANSWERED: ReadonlySet<TransferPhase> = new Set(['answered', 'whispering', 'awaiting_acceptance'])

/** One warm transfer's state; `start()` begins it, `handle()` takes each input. */
export class WarmTransferMachine {
  readonly #plan: WarmTransferPlan
  readonly #now: () => number
  #phase: TransferPhase = 'idle'
  #startedAt = 0
  #answeredAtMs: number | undefined
  #failure: TransferFailureReason | undefined
  #endedBy: TransferEndedBy | undefined

  /** `now` is a monotonic clock in ms (the session's, a test's). Nothing starts before `start()`. */
  constructor(plan: WarmTransferPlan, now: () => number) {
    this.#plan = plan
    this.#now = now
  }

  /** Where the transfer is. */
  get phase(): TransferPhase {
    return this.#phase
  }

  /** Why it failed, once `failed`. */
  get failure(): TransferFailureReason | undefined {
    return this.#failure
  }

  /** Who hung up a bridged call, once `ended`. */
  get endedBy(): TransferEndedBy | undefined {
    return this.#endedBy
  }

  /** When (on the clock) the transfer times out, while it can; undefined once bridged or over. */
  deadline(): number | undefined {
    return BEFORE_BRIDGE.has(this.#phase) ? this.#startedAt + this.#plan.timeoutMs : undefined
  }

  /** Begins: dial the human, hold the caller. Does nothing a second time. */
  start(): TransferAction[] {
    if (this.#phase !== 'idle') return []
    this.#startedAt = this.#now()
    this.#phase = 'dialling'
    return [
      { type: 'report', fact: { type: 'transfer.started', atMs: 0 } },
      { type: 'dial_human' },
      { type: 'start_hold', line: this.#plan.hold },
    ]
  }

  /** Takes one input; returns what to do. An input that means nothing in the current phase returns nothing. */
  handle(input: TransferInput): TransferAction[] {
    const phase = this.#phase
    if (phase === 'bridged') return this.#whileBridged(input)
    if (!BEFORE_BRIDGE.has(phase)) return []
    switch (input.type) {
      case 'progress':
        return this.#progress(input.progress)
      case 'whisper_done':
        if (phase !== 'whispering') return []
        if (this.#plan.accept === 'none') return this.#bridge()
        this.#phase = 'awaiting_acceptance'
        return []
      case 'dtmf': {
        if (this.#plan.accept !== 'dtmf' || (phase !== 'whispering' && phase !== 'awaiting_acceptance')) return []
        const key = /[12]/.exec(input.digits)?.[0]
        if (key === '1') return this.#bridge()
        if (key === '2') return this.#fail('declined', true)
        return []
      }
      case 'caller_hangup':
        return this.#fail('caller_hung_up', true)
      case 'human_hangup':
        return ANSWERED.has(phase) ? this.#fail('declined', false) : this.#fail('failed', false)
      case 'timeout':
        return this.#now() >= this.#startedAt + this.#plan.timeoutMs ? this.#fail('timeout', true) : []
    }
  }

  #progress(progress: HumanLegProgress): TransferAction[] {
    const phase = this.#phase
    switch (progress) {
      case 'ringing':
        if (phase === 'dialling') this.#phase = 'ringing'
        return []
      case 'answered':
        return phase === 'dialling' || phase === 'ringing' ? this.#answer() : []
      case 'machine':
        return this.#fail('voicemail', true)
      case 'busy':
      case 'no_answer':
      case 'declined':
        return ANSWERED.has(phase) ? [] : this.#fail(progress, false)
      case 'failed':
        return this.#fail('failed', false)
    }
  }

  #answer(): TransferAction[] {
    this.#answeredAtMs = this.#elapsed()
    const actions: TransferAction[] = [{ type: 'report', fact: { type: 'transfer.answered', atMs: this.#answeredAtMs } }]
    const prompt = this.#plan.accept === 'dtmf' ? ACCEPT_PROMPT : undefined
    const text = [this.#plan.whisper, prompt].filter((s) => s !== undefined).join(' ')
    if (text === '') {
      // accept "none" and nothing to whisper: answering is accepting.
      this.#phase = 'answered'
      return [...actions, ...this.#bridge()]
    }
    this.#phase = 'whispering'
    return [...actions, { type: 'speak_whisper', text }]
  }

  #bridge(): TransferAction[] {
    this.#phase = 'bridged'
    const fact: TransferFact = { type: 'transfer.connected', atMs: this.#elapsed(), answeredAtMs: this.#answeredAtMs ?? 0 }
    return [{ type: 'stop_hold' }, { type: 'bridge' }, { type: 'report', fact }]
  }

  /** `legLive`: the human's leg may still be up and must be hung up (not after the carrier ended it). */
  #fail(reason: TransferFailureReason, legLive: boolean): TransferAction[] {
    const phase = this.#phase
    this.#phase = 'failed'
    this.#failure = reason
    const fact: TransferFact = { type: 'transfer.failed', atMs: this.#elapsed(), reason, phase, answeredAtMs: this.#answeredAtMs }
    const actions: TransferAction[] = legLive ? [{ type: 'stop_human_leg' }] : []
    actions.push({ type: 'stop_hold' })
    // Nobody to give back when the caller left; otherwise the caller must hear the agent, never silence.
    if (reason !== 'caller_hung_up') actions.push({ type: 'return_to_agent', reason })
    actions.push({ type: 'report', fact })
    return actions
  }

  #whileBridged(input: TransferInput): TransferAction[] {
    const endedBy = input.type === 'caller_hangup' ? 'caller' : input.type === 'human_hangup' ? 'human' : undefined
    if (endedBy === undefined) return []
    this.#phase = 'ended'
    this.#endedBy = endedBy
    return endedBy === 'caller' ? [{ type: 'stop_human_leg' }, { type: 'end_session', endedBy }] : [{ type: 'end_session', endedBy }]
  }

  #elapsed(): number {
    return Math.max(0, Math.round(this.#now() - this.#startedAt))
  }
}
