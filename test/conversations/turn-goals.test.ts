import t from 'tap'
import { byCategory, goalsMissed, INTERRUPT_STOP_GOAL_MS } from '../../bench/conversation-results.js'
import { loadCorpus, type ScriptOutcome, startConversationWorld } from '../../bench/conversation-world.js'

// One script per category of the conversation corpus, through both STT vendors' fakes, with default turn_manager
// settings; fails when a category crosses its goal (the bench `npm run bench -- conversations` plays all of them).
const SLICE = ['phone-us-1200', 'date-800', 'and-1000', 'yes', 'long-move', 'bc-mm-hm', 'int-stop']

t.test('turn taking meets its goals on one spoken script per category', async (t) => {
  const scripts = loadCorpus().scripts.filter((s) => SLICE.includes(s.id))
  t.equal(scripts.length, SLICE.length, 'every script of the slice is in the corpus')
  const world = await startConversationWorld()
  t.teardown(() => world.close())
  const outcomes: ScriptOutcome[] = await Promise.all(
    scripts.flatMap((script) => (['vendor_a', 'vendor_b'] as const).map((vendor) => world.run(script, vendor))),
  )
  t.strictSame(goalsMissed(outcomes), [], 'no goal missed')
  const results = byCategory(outcomes)
  t.equal(results.find((r) => r.category === 'numbers')?.premature, 0, 'a phone number read with 1.2 s pauses is not cut off')
  t.equal(results.find((r) => r.category === 'backchannel')?.falseBargeIns, 0, '"mm-hm" over the agent does not stop it')
  t.equal(results.find((r) => r.category === 'backchannel')?.sentAsTurn, 0, 'nor is it sent as a turn')
  const interruption = results.find((r) => r.category === 'interruption')
  t.equal(interruption?.missedInterruptions, 0, '"stop" does')
  t.ok(
    interruption?.interruptP50 !== null && (interruption?.interruptP50 ?? Infinity) < INTERRUPT_STOP_GOAL_MS,
    `and the agent is heard to stop ${Math.round(interruption?.interruptP50 ?? -1)} ms after its first word (paused, then cut off)`,
  )
  const short = results.find((r) => r.category === 'short_answer')
  t.ok(
    short?.endDelayP50 !== null && (short?.endDelayP50 ?? Infinity) < 700,
    `"yes" answered ${Math.round(short?.endDelayP50 ?? -1)} ms after it`,
  )
  for (const o of outcomes)
    t.ok(
      o.sentTexts.every((text) => text.trim() !== ''),
      `${o.id} (${o.vendor}): every request carries words`,
    )
})
