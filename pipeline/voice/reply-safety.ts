import type { FallbackOptions, HoldingOptions } from '../options/fallback-options.js'
import type { PipelineConfig } from '../config/schema.js'
import type { AssistantTurn } from './assistant-turn.js'

/** How a pipeline keeps a caller from silence when the agent fails or is slow (agent.webhook's settings). */
export interface ReplySafety {
  /** End of the caller's turn -> the reply's first speakable text; past it the turn fails with cause `timeout`. */
  replyTimeoutMs: number
  fallback: FallbackOptions
  holding: HoldingOptions
}

/** The config's reply safety settings: agent.webhook's; undefined for other agent steps (failures are only recorded). */
export function replySafetyOf(config: PipelineConfig): ReplySafety | undefined {
  const webhook = config.plugins.find((p) => p.use === 'agent.webhook')
  if (webhook?.use !== 'agent.webhook') return undefined
  const o = webhook.options
  return { replyTimeoutMs: o.reply_timeout_ms, fallback: o.fallback, holding: o.holding }
}

/** What to say for a failed turn, and what the turn does once it was heard. */
export type FallbackSpeech = { text: string; next: 'continue' | 'hangup' } | { text: string; next: 'transfer'; to: string }

/**
 * Consecutive failed turns and the fallback each one gets: the configured messages in turn, and after
 * `max_consecutive_failures` in a row, the farewell (hang up) or the transfer message (transfer) instead.
 */
export class FailureStreak {
  readonly #options: FallbackOptions
  #consecutive = 0
  #spoken = 0

  constructor(options: FallbackOptions) {
    this.#options = options
  }

  /** Failed turns in a row so far. */
  get consecutive(): number {
    return this.#consecutive
  }

  /** A turn was answered: the streak is over. */
  succeeded(): void {
    this.#consecutive = 0
  }

  /** A turn failed: what the caller hears instead. */
  failed(): FallbackSpeech {
    const o = this.#options
    this.#consecutive += 1
    if (this.#consecutive >= o.max_consecutive_failures) {
      if (o.on_max_failures === 'hangup') {
        this.#consecutive = 0
        return { text: o.farewell_message, next: 'hangup' }
      }
      if (o.on_max_failures === 'transfer' && o.transfer_to !== undefined) {
        this.#consecutive = 0
        return { text: o.transfer_message, next: 'transfer', to: o.transfer_to }
      }
    }
    const text = o.messages[this.#spoken % o.messages.length] ?? ''
    this.#spoken += 1
    return { text, next: 'continue' }
  }
}

/** The holding phrases of a session, spoken in turn. */
export class HoldingPhrases {
  readonly #messages: readonly string[]
  #next = 0

  constructor(messages: readonly string[]) {
    this.#messages = messages
  }

  /** The next phrase. */
  next(): string {
    const text = this.#messages[this.#next % this.#messages.length] ?? ''
    this.#next += 1
    return text
  }
}

/** What {@link guardReply} needs from the reply side. */
export interface GuardHooks {
  /** How long ago the caller's turn ended. */
  elapsedMs: number
  holding: HoldingPhrases | undefined
  /** Ends the agent request (not the turn). */
  abortRequest(): void
  /** Says the gateway's own words in the turn. */
  say(text: string): void
}

/**
 * Arms a message turn's reply timeout (no speakable text by then: the request ends and the turn fails with
 * `timeout`) and its holding phrase; both count from the end of the caller's turn. Returns the timers to clear.
 */
export function guardReply(a: AssistantTurn, safety: ReplySafety, hooks: GuardHooks): NodeJS.Timeout[] {
  const waiting = () => !a.agentSpoke && !a.interrupted && !a.finished && !a.agentDone && a.failure === undefined
  // A caller's turn that took long to transcribe still leaves the backend half a second.
  const timeout = setTimeout(
    () => {
      if (!waiting()) return
      a.failure = { cause: 'timeout', detail: `no speakable reply within ${safety.replyTimeoutMs} ms`, heard: null }
      hooks.abortRequest()
    },
    Math.max(500, safety.replyTimeoutMs - hooks.elapsedMs),
  )
  const timers = [timeout]
  const holding = hooks.holding
  if (holding !== undefined && safety.holding.after_ms < safety.replyTimeoutMs) {
    const hold = setTimeout(
      () => {
        if (waiting()) hooks.say(holding.next())
      },
      Math.max(0, safety.holding.after_ms - hooks.elapsedMs),
    )
    timers.push(hold)
  }
  for (const timer of timers) timer.unref()
  return timers
}
