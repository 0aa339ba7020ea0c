// Turn taking judged on spoken conversations: every script of test/fixtures/conversations plays into a real session
// through each STT vendor's fake (words 200 ms behind the audio as interims, segment ends 250 ms after the vendor's
// endpointing silence), and the agent answers with a sentence. Per category: premature ends of turn, false
// barge-ins, missed interruptions, end-of-turn delay after the last word. CONVERSATIONS=<id,...|category> limits
// the scripts; CONVERSATIONS_PARALLEL (default 6) sets how many play at once.
import type { BenchFn, BenchRow } from './bench-util.js'
import { byCategory, goalsMissed } from './conversation-results.js'
import { loadCorpus, type ScriptOutcome, startConversationWorld, type SttVendor } from './conversation-world.js'

export const bench: BenchFn = async () => {
  const filter = process.env.CONVERSATIONS?.split(',').filter(Boolean) ?? []
  const parallel = Math.max(1, Number(process.env.CONVERSATIONS_PARALLEL ?? 6))
  const scripts = loadCorpus().scripts.filter((s) => filter.length === 0 || filter.includes(s.id) || filter.includes(s.category))
  const world = await startConversationWorld()
  const outcomes: ScriptOutcome[] = []
  try {
    const jobs = (['vendor_a', 'vendor_b'] as SttVendor[]).flatMap((vendor) => scripts.map((script) => ({ script, vendor })))
    let next = 0
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        while (next < jobs.length) {
          const job = jobs[next++]!
          outcomes.push(await world.run(job.script, job.vendor))
        }
      }),
    )
  } finally {
    await world.close()
  }
  const rows: BenchRow[] = []
  for (const vendor of ['vendor_a', 'vendor_b'] as const) {
    for (const r of byCategory(outcomes.filter((o) => o.vendor === vendor))) {
      const ms = (v: number | null) => (v === null ? '' : Math.round(v))
      rows.push({
        stt: vendor,
        category: r.category,
        scripts: r.scripts,
        premature: r.premature,
        'false barge-in': r.falseBargeIns,
        'backchannel sent as turn': r.sentAsTurn,
        'missed interruption': r.missedInterruptions,
        'end delay p50 ms': ms(r.endDelayP50),
        'end delay p95 ms': ms(r.endDelayP95),
        'interrupt p50 ms': ms(r.interruptP50),
        'interrupt p95 ms': ms(r.interruptP95),
        'paused, resumed': r.pausedResumed,
        'pause p50 ms': ms(r.pauseP50),
      })
    }
  }
  const missed = goalsMissed(outcomes)
  console.log(missed.length === 0 ? 'goals: all met' : `goals missed:\n- ${missed.join('\n- ')}`)
  for (const o of outcomes.filter((o) => o.premature > 0)) console.log(`premature: ${o.id} (${o.vendor}): ${o.sentTexts.join(' | ')}`)
  const stops = outcomes.filter((o) => o.interruptMs !== null && o.category === 'interruption')
  if (stops.length > 0)
    console.log(`stopped after the first word (ms): ${stops.map((o) => `${o.id} (${o.vendor}) ${Math.round(o.interruptMs!)}`).join(', ')}`)
  return rows
}
