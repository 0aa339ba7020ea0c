import type { AgentLlmOptions } from '../options/agent-options.js'
import type { AgentContext, AgentEvent, AgentRequest, AgentStep } from './agent-step.js'

/** What {@link ScriptedAgentStep} needs besides its options. */
export interface ScriptedAgentDeps {
  /** The session's clock, in ms since the epoch (for "what time is it"). Default: `Date.now`. */
  now?: (() => number) | undefined
  /** IANA time zone the time is spoken in. Default: `UTC`. */
  timeZone?: string | undefined
}

/** What the scripted agent says, by rule. */
export const SCRIPTED_LINES = {
  greeting: 'Hello! How can I help you today?',
  capabilities: "I'm the voxgate demo agent. I can tell you the time, repeat what you say, and hang up when you say goodbye.",
  farewell: 'Goodbye! Thanks for calling.',
  silence: "Sorry, I didn't catch that. Could you say it again?",
} as const

const RULES: ReadonlyArray<{ test: RegExp; answer: (deps: Required<ScriptedAgentDeps>) => AgentEvent }> = [
  { test: /\b(good ?bye|bye|hang up|see you)\b/, answer: () => ({ type: 'hangup', text: SCRIPTED_LINES.farewell }) },
  {
    test: /\b(what time|the time|time is it)\b/,
    answer: (deps) => ({ type: 'tts', text: `It's ${spokenTime(deps.now(), deps.timeZone)}.` }),
  },
  {
    test: /\b(what can you do|help|who are you|what are you)\b/,
    answer: () => ({ type: 'tts', text: SCRIPTED_LINES.capabilities }),
  },
  {
    test: /^(hi|hello|hey|hiya|howdy|good (morning|afternoon|evening))\b/,
    answer: () => ({ type: 'tts', text: SCRIPTED_LINES.greeting }),
  },
]

/**
 * `agent.llm` with provider `scripted`: an offline, deterministic demo agent (no network). It greets with
 * `welcome_message`, answers a few phrases (greeting, "what can you do", the time), hangs up on "goodbye", and
 * otherwise echoes what it heard.
 */
export class ScriptedAgentStep implements AgentStep {
  /** @inheritdoc */
  readonly handles: ReadonlySet<AgentRequest['kind']> = new Set<AgentRequest['kind']>(['welcome', 'message'])
  readonly #options: AgentLlmOptions
  readonly #deps: Required<ScriptedAgentDeps>

  constructor(options: AgentLlmOptions, deps: ScriptedAgentDeps = {}) {
    this.#options = options
    this.#deps = { now: deps.now ?? Date.now, timeZone: deps.timeZone ?? 'UTC' }
  }

  /** @inheritdoc */
  async *respond(request: AgentRequest, _context: AgentContext, options: { signal: AbortSignal }): AsyncGenerator<AgentEvent> {
    for (const event of this.answer(request)) {
      if (options.signal.aborted) return
      yield event
    }
  }

  /** The complete reply to a request (pure; `respond` streams it). */
  answer(request: AgentRequest): AgentEvent[] {
    if (request.kind === 'welcome') {
      const welcome = this.#options.welcome_message
      return welcome.trim() === '' ? [{ type: 'end' }] : [{ type: 'tts', text: welcome }, { type: 'end' }]
    }
    if (request.kind === 'data' || request.kind === 'machine_detection' || request.kind === 'transfer_failed') return [{ type: 'end' }]
    const heard = request.text.trim()
    const normalized = heard
      .toLowerCase()
      .replace(/[^\p{L}\p{N}' ]+/gu, ' ')
      .replace(/\s+/g, ' ')
      .trim()
    if (normalized === '') return [{ type: 'tts', text: SCRIPTED_LINES.silence }, { type: 'end' }]
    for (const rule of RULES) {
      if (!rule.test.test(normalized)) continue
      const event = rule.answer(this.#deps)
      return event.type === 'hangup' ? [event] : [event, { type: 'end' }]
    }
    return [{ type: 'tts', text: `You said: ${heard}` }, { type: 'end' }]
  }
}

function spokenTime(ms: number, timeZone: string): string {
  const time = new Intl.DateTimeFormat('en-US', { hour: 'numeric', minute: '2-digit', timeZone }).format(ms)
  // ICU may put a narrow no-break space before AM/PM; speech engines read a plain space best.
  return `${time.replace(/\s/gu, ' ')}${timeZone === 'UTC' ? ' UTC' : ''}`
}
