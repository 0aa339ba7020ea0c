/**
 * Drives one warm transfer: feeds the pure `WarmTransferMachine` its inputs, carries out its actions
 * through `WarmTransferIo` (the legs, the audio, the webhooks) and arms one timer for the machine's deadline. Every
 * asynchronous step (dialling, the whisper) runs under the driver's AbortSignal: `abort()` (the session ended) stops
 * them and cleans up the human's leg. Timers come from an injected clock so the driver is tested without waiting.
 */
import type { TransferAction, TransferEndedBy, TransferFact, TransferFailureReason, TransferInput } from './transfer-steps.js'
import { WarmTransferMachine, type WarmTransferPlan } from './warm-transfer-machine.js'

/** The I/O of a warm transfer; each call returns at once (async work listens to `signal`). */
export interface WarmTransferIo {
  /** Dials the human; rejects when the carrier refused (the transfer then fails `failed`). */
  dialHuman(signal: AbortSignal): Promise<void>
  /** Says `line` (if any) to the caller, then plays hold audio until `stopHold`; the agent stops listening. */
  startHold(line: string | undefined, signal: AbortSignal): void
  stopHold(): void
  /** Speaks `text` to the human only; calls `done` once it was played (with an error when it could not be). */
  speakWhisper(text: string, signal: AbortSignal, done: (error?: unknown) => void): void
  /** Connects the two legs' audio. */
  bridge(): void
  /** Hangs up the human's leg (idempotent). */
  stopHumanLeg(): void
  /** The caller is back with the agent, which tells the backend `transfer.failed` with `reason`. */
  returnToAgent(reason: TransferFailureReason): void
  /** A bridged call is over: end the session, saying who hung up. */
  endSession(endedBy: TransferEndedBy): void
  /** A lifecycle fact to report (webhooks, logs). */
  report(fact: TransferFact): void
}

/** Time for the driver: a monotonic clock in ms and a one-shot timer (returns its cancel). */
export interface DriverClock {
  now(): number
  setTimer(fn: () => void, ms: number): () => void
}

/** The process clock. */
export const REAL_CLOCK: DriverClock = {
  now: () => performance.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, ms)
    t.unref()
    return () => clearTimeout(t)
  },
}

/** One warm transfer in progress. */
export class WarmTransferDriver {
  readonly machine: WarmTransferMachine
  readonly #io: WarmTransferIo
  readonly #clock: DriverClock
  readonly #abort = new AbortController()
  readonly #onError: (step: string, err: unknown) => void
  #cancelTimer: (() => void) | undefined
  #armedFor: number | undefined

  constructor(plan: WarmTransferPlan, io: WarmTransferIo, clock: DriverClock, onError: (step: string, err: unknown) => void) {
    this.#io = io
    this.#clock = clock
    this.#onError = onError
    this.machine = new WarmTransferMachine(plan, () => clock.now())
  }

  /** Aborted when the transfer is over or the session ended. */
  get signal(): AbortSignal {
    return this.#abort.signal
  }

  /** True until the transfer failed, or the bridged call ended. */
  get active(): boolean {
    const phase = this.machine.phase
    return phase !== 'failed' && phase !== 'ended' && !this.#abort.signal.aborted
  }

  /** True once the two legs are bridged (and until the call ends). */
  get bridged(): boolean {
    return this.machine.phase === 'bridged'
  }

  start(): void {
    this.#run(this.machine.start())
  }

  /** One input (from the carrier, the legs, the caller). Ignored once the driver was aborted. */
  input(input: TransferInput): void {
    if (this.#abort.signal.aborted) return
    this.#run(this.machine.handle(input))
  }

  /** The session ended: stop everything in flight and hang up the human's leg. Idempotent. */
  abort(): void {
    if (this.#abort.signal.aborted) return
    this.#cancelTimer?.()
    this.#abort.abort(new Error('warm transfer aborted'))
    this.#safely('stop_hold', () => this.#io.stopHold())
    this.#safely('stop_human_leg', () => this.#io.stopHumanLeg())
  }

  #run(actions: readonly TransferAction[]): void {
    for (const action of actions) this.#safely(action.type, () => this.#do(action))
    this.#arm()
    const phase = this.machine.phase
    // A failed transfer is over: nothing more may run (a bridged call ends through `end_session`).
    if (phase === 'failed' || phase === 'ended') {
      this.#cancelTimer?.()
      this.#abort.abort(new Error(`warm transfer ${phase}`))
    }
  }

  #do(action: TransferAction): void {
    const io = this.#io
    const signal = this.#abort.signal
    switch (action.type) {
      case 'dial_human':
        io.dialHuman(signal).catch((err: unknown) => {
          if (signal.aborted) return
          this.#onError('dial_human', err)
          this.input({ type: 'progress', progress: 'failed' })
        })
        return
      case 'start_hold':
        return io.startHold(action.line, signal)
      case 'stop_hold':
        return io.stopHold()
      case 'speak_whisper':
        io.speakWhisper(action.text, signal, (err) => {
          if (signal.aborted) return
          // A failed whisper: the human hears nothing more of the brief; acceptance (a key) can still come.
          if (err !== undefined) this.#onError('speak_whisper', err)
          this.input({ type: 'whisper_done' })
        })
        return
      case 'bridge':
        return io.bridge()
      case 'stop_human_leg':
        return io.stopHumanLeg()
      case 'return_to_agent':
        return io.returnToAgent(action.reason)
      case 'end_session':
        return io.endSession(action.endedBy)
      case 'report':
        return io.report(action.fact)
    }
  }

  /** Arms the timer for the machine's deadline when it moved (a stale timer is harmless: the machine checks). */
  #arm(): void {
    const deadline = this.machine.deadline()
    if (deadline === this.#armedFor) return
    this.#cancelTimer?.()
    this.#cancelTimer = undefined
    this.#armedFor = deadline
    if (deadline === undefined || this.#abort.signal.aborted) return
    this.#cancelTimer = this.#clock.setTimer(
      () => {
        // A timer can fire a little before its deadline by the clock (Node schedules from the event loop's cached
        // time, stale after a long tick): the machine then ignores the timeout, and the timer is armed again for what
        // is left. Without this the transfer waited for ever (seen under load: no timeout, no failure, silence).
        this.#cancelTimer = undefined
        this.#armedFor = undefined
        this.input({ type: 'timeout' })
      },
      Math.max(0, deadline - this.#clock.now()),
    )
  }

  #safely(step: string, fn: () => void): void {
    try {
      fn()
    } catch (err) {
      this.#onError(step, err)
    }
  }
}
