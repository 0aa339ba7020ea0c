import t from 'tap'
import { connectTwoTurnCall, eventually, newBackendTenant, sessionOfCall, speech, startVoiceWorld } from './carrier-setup.js'
import { LATENCY_STAGES } from '../../pipeline/index.js'

// A phone call through the carrier simulator, with the speech vendors and the customer backend as local fakes:
// the stored breakdown of each turn is checked against the turn's latency_ms and the next message webhook.
const { c, transcripts } = await startVoiceWorld(t)
const { tenant, backend } = await newBackendTenant(t, c, 'latency-token')

type Stage = { name: string; at_ms: number; duration_ms: number }

t.test("each turn's stored breakdown is ordered, adds up to its latency_ms, and rides on the next message", async (t) => {
  const { callSid, call, row } = await connectTwoTurnCall(c, tenant, backend, transcripts)
  const waitRequest = (pred: (json: any) => boolean) =>
    eventually(async () => backend.requests.find((q) => q.json?.session_id === row.id && pred(q.json)), 15_000)
  const allHeard = () =>
    eventually(async () => (call.marks.length > 0 && call.earpiece.pendingMarks().length === 0 ? true : undefined), 10_000)
  const details = async () => (await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/${row.id}`, { key: tenant.apiKey })).body

  await waitRequest((j) => j.type === 'session.start')
  await allHeard()
  await call.sendAudio(speech('two-phrases.wav'))
  const first = await waitRequest((j) => j.type === 'message' && j.text === 'what are your opening hours')
  t.notOk('previous_turn' in first.json, 'the welcome turn has no breakdown to offer')
  // The first reply is stored once the caller has heard it all (its marks came back).
  const stored = await eventually(async () => {
    const d = await details()
    return d.transcript.find((e: any) => e.user_message === 'what are your opening hours' && e.latency_ms !== null)
  }, 15_000)
  await call.sendAudio(speech('two-phrases.wav'))
  const second = await waitRequest((j) => j.type === 'message' && j.text === 'and on sundays')
  t.same(
    second.json.previous_turn,
    { turn_id: first.json.turn_id, latency_ms: stored.latency_ms, latency_breakdown: stored.latency_breakdown },
    "the next message carries the previous turn's stored breakdown",
  )
  await eventually(async () => {
    const d = await details()
    return d.transcript.filter((e: any) => e.user_message !== null && e.latency_ms !== null).length === 2 ? true : undefined
  }, 15_000)
  await call.hangup()
  const ended = await eventually(async () => {
    const s = await sessionOfCall(c, callSid)
    return s?.status === 'ended' ? s : undefined
  })
  const d = await details()
  const answered = d.transcript.filter((e: any) => e.user_message !== null)
  t.equal(answered.length, 2)
  for (const entry of answered) {
    const stages: Stage[] = entry.latency_breakdown.stages
    t.same(
      stages.map((s) => s.name),
      LATENCY_STAGES,
      'a phone turn reaches every stage, first audio heard (mark echoed) last',
    )
    t.equal(stages[0]?.at_ms, 0, 'measured from the end of user speech')
    t.ok(
      stages.every((s, i) => i === 0 || s.at_ms >= (stages[i - 1] as Stage).at_ms),
      `ordered: ${JSON.stringify(stages)}`,
    )
    t.ok(
      stages.every((s, i) => s.duration_ms === s.at_ms - (i === 0 ? 0 : (stages[i - 1] as Stage).at_ms)),
      'each duration is the step from the stage before',
    )
    t.equal(
      stages.reduce((n, s) => n + s.duration_ms, 0),
      entry.latency_ms,
      'the stages add up to the turn latency',
    )
  }
  const welcome = d.transcript.find((e: any) => e.user_message === null)
  t.equal(welcome?.latency_breakdown, null, 'a welcome turn has neither latency nor breakdown')
  t.equal(ended.end_reason, 'caller_hangup')
})
