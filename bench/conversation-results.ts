// The conversation bench's figures per category, and the goals they are held to (default settings).
import type { ConversationCategory } from '../test/fixtures/conversations/corpus-types.js'
import type { ScriptOutcome } from './conversation-world.js'

/** One category's figures over the scripts that ran. */
export interface CategoryResult {
  category: ConversationCategory
  scripts: number
  /** Scripts in which the agent answered before the caller's last word. */
  premature: number
  /** Backchannels that stopped the agent. */
  falseBargeIns: number
  /** Interruptions that did not. */
  missedInterruptions: number
  /** Backchannels the agent was sent as a turn. */
  sentAsTurn: number
  endDelayP50: number | null
  endDelayP95: number | null
  /** The caller's first word -> the agent's audio stopped, for interruptions. */
  interruptP50: number | null
  interruptP95: number | null
  /** Scripts in which the reply was paused for the caller's speech and resumed (backchannels). */
  pausedResumed: number
  /** How long those pauses lasted, median. */
  pauseP50: number | null
}

/**
 * The goal for a genuine interruption: the agent's audio stops within `min_interruption_ms` (400 by default) of the
 * caller's speech, plus 200 ms for the VAD to hear that speech begin (it hears an unvoiced "st" late, at the vowel):
 * the first word -> audio stopped, p50. Waiting for the first recognised word cannot meet it: the word is in 200 ms
 * after it ends.
 */
export const INTERRUPT_STOP_GOAL_MS = 600

/** The value at `p` percent of the sorted values (nearest rank). */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

const ORDER: readonly ConversationCategory[] = [
  'numbers',
  'dates_names',
  'hesitation',
  'short_answer',
  'long_answer',
  'backchannel',
  'interruption',
]

/** Figures per category, in a fixed order. */
export function byCategory(outcomes: readonly ScriptOutcome[]): CategoryResult[] {
  const categories = ORDER.filter((c) => outcomes.some((o) => o.category === c))
  return categories.map((category) => {
    const os = outcomes.filter((o) => o.category === category)
    const delays = os.flatMap((o) => (o.endDelayMs === null ? [] : [o.endDelayMs]))
    const cuts = os.flatMap((o) => (o.interruptMs === null ? [] : [o.interruptMs]))
    const pauses = os.flatMap((o) => (o.pausedMs === null ? [] : [o.pausedMs]))
    return {
      category,
      scripts: os.length,
      premature: category === 'backchannel' || category === 'interruption' ? 0 : os.filter((o) => o.premature > 0).length,
      falseBargeIns: category === 'backchannel' ? os.filter((o) => o.interrupted).length : 0,
      missedInterruptions: category === 'interruption' ? os.filter((o) => !o.interrupted).length : 0,
      sentAsTurn: category === 'backchannel' ? os.filter((o) => o.sentTexts.length > 0).length : 0,
      endDelayP50: category === 'backchannel' || category === 'interruption' ? null : percentile(delays, 50),
      endDelayP95: category === 'backchannel' || category === 'interruption' ? null : percentile(delays, 95),
      interruptP50: category === 'interruption' ? percentile(cuts, 50) : null,
      interruptP95: category === 'interruption' ? percentile(cuts, 95) : null,
      pausedResumed: pauses.length,
      pauseP50: percentile(pauses, 50),
    }
  })
}

/**
 * The goals (default settings): no premature end in number dictation with pauses up to 1.5 s, at most 5% false
 * barge-ins on backchannels and 5% missed interruptions, interruptions heard to stop within
 * {@link INTERRUPT_STOP_GOAL_MS} of the first word (p50), end-of-turn delay p50 under 700 ms for complete short
 * answers. Returns what a result misses; empty when it meets them.
 */
export function goalsMissed(outcomes: readonly ScriptOutcome[]): string[] {
  const missed: string[] = []
  const dictation = outcomes.filter((o) => o.category === 'numbers' && o.maxPauseMs <= 1500)
  const early = dictation.filter((o) => o.premature > 0)
  if (early.length > 0) missed.push(`premature end of turn in number dictation: ${early.map((o) => `${o.id} (${o.vendor})`).join(', ')}`)
  const rate = (n: number, of: number) => (of === 0 ? 0 : n / of)
  const bc = outcomes.filter((o) => o.category === 'backchannel')
  const falseBargeIns = bc.filter((o) => o.interrupted)
  if (rate(falseBargeIns.length, bc.length) > 0.05)
    missed.push(`false barge-ins ${falseBargeIns.length}/${bc.length}: ${falseBargeIns.map((o) => o.id).join(', ')}`)
  const ints = outcomes.filter((o) => o.category === 'interruption')
  const missedInts = ints.filter((o) => !o.interrupted)
  if (rate(missedInts.length, ints.length) > 0.05)
    missed.push(`missed interruptions ${missedInts.length}/${ints.length}: ${missedInts.map((o) => o.id).join(', ')}`)
  const stop = percentile(
    ints.flatMap((o) => (o.interruptMs === null ? [] : [o.interruptMs])),
    50,
  )
  if (stop !== null && stop >= INTERRUPT_STOP_GOAL_MS)
    missed.push(`interruptions stopped the agent ${Math.round(stop)} ms after the first word, p50 (goal under ${INTERRUPT_STOP_GOAL_MS})`)
  const short = outcomes.filter((o) => o.category === 'short_answer').flatMap((o) => (o.endDelayMs === null ? [] : [o.endDelayMs]))
  const p50 = percentile(short, 50)
  if (p50 !== null && p50 >= 700) missed.push(`end-of-turn delay p50 for short answers ${Math.round(p50)} ms (goal under 700)`)
  if (outcomes.some((o) => o.category === 'short_answer') && p50 === null) missed.push('no short answer reached the agent')
  return missed
}
