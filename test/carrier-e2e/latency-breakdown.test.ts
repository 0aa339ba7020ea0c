import t from 'tap'
import { performance } from 'node:perf_hooks'
import { connectTwoTurnCall, eventually, newBackendTenant, sessionOfCall, speech, sse, startVoiceWorld } from './carrier-setup.js'
import { LATENCY_STAGES } from '../../pipeline/index.js'

// A phone call through the carrier simulator, with the speech vendors and the customer backend as local fakes:
// the stored breakdown of each turn is checked against the turn's latency_ms, the next message webhook, and the
// test's own clock (performance.now(), which the fake backend and the simulated phone stamp with too).
const { c, transcripts } = await startVoiceWorld(t)
const { tenant, backend } = await newBackendTenant(t, c, 'latency-token')

type Stage = { name: string; at_ms: number; duration_ms: number }

/** The backend holds its reply's headers this long, and its text this much longer: floors every breakdown must show. */
const HEADERS_DELAY_MS = 300
const TEXT_DELAY_MS = 200
/** Node may fire a timer up to a millisecond early; the floors allow for it. */
const TIMER_SLACK_MS = 2

/** What the test saw of one turn on its own clock. */
interface Witness {
  /** Before the caller's audio was sent: the end of that speech cannot come earlier. */
  sentAt: number
  /** The message webhook reached the backend: it cannot have left the gateway later. */
  webhookArrivedAt: number
  /** The phone got the reply's first audio frame: it cannot have been written later. */
  firstFrameAt: number
  /** The stored breakdown was read: its last stage cannot be later. */
  readAt: number
}

t.test("each turn's stored breakdown is ordered, adds up to its latency_ms, and rides on the next message", async (t) => {
  const { callSid, call, row } = await connectTwoTurnCall(c, tenant, backend, transcripts)
  const waitRequest = (pred: (json: any) => boolean) =>
    eventually(async () => backend.requests.find((q) => q.json?.session_id === row.id && pred(q.json)), 15_000)
  const allHeard = () =>
    eventually(async () => (call.marks.length > 0 && call.earpiece.pendingMarks().length === 0 ? true : undefined), 10_000)
  const details = async () => (await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/${row.id}`, { key: tenant.apiKey })).body

  backend.reply = (req) =>
    req.json.type === 'session.start'
      ? sse(req.json.turn_id, 'Hello.')
      : {
          kind: 'sse',
          headersDelayMs: HEADERS_DELAY_MS,
          steps: [
            { delayMs: TEXT_DELAY_MS },
            { data: { type: 'response.tts', content: 'We open at nine.', turn_id: req.json.turn_id } },
            { data: { type: 'response.end', turn_id: req.json.turn_id } },
          ],
        }
  const firstReplyFrameAfter = (from: number) =>
    eventually(async () => call.messages.find((m) => m.event === 'media' && m.at > from)?.at, 15_000)
  const witnesses: Witness[] = []

  await waitRequest((j) => j.type === 'session.start')
  await allHeard()
  const sentFirst = performance.now()
  await call.sendAudio(speech('two-phrases.wav'))
  const first = await waitRequest((j) => j.type === 'message' && j.text === 'what are your opening hours')
  t.notOk('previous_turn' in first.json, 'the welcome turn has no breakdown to offer')
  // The first reply is stored once the caller has heard it all (its marks came back).
  const stored = await eventually(async () => {
    const d = await details()
    return d.transcript.find((e: any) => e.user_message === 'what are your opening hours' && e.latency_ms !== null)
  }, 15_000)
  witnesses.push({
    sentAt: sentFirst,
    webhookArrivedAt: first.arrivedAt,
    firstFrameAt: await firstReplyFrameAfter(first.arrivedAt),
    readAt: performance.now(),
  })
  await allHeard()
  const sentSecond = performance.now()
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
  witnesses.push({
    sentAt: sentSecond,
    webhookArrivedAt: second.arrivedAt,
    firstFrameAt: await firstReplyFrameAfter(second.arrivedAt),
    readAt: performance.now(),
  })
  await call.hangup()
  const ended = await eventually(async () => {
    const s = await sessionOfCall(c, callSid)
    return s?.status === 'ended' ? s : undefined
  })
  const d = await details()
  const answered = d.transcript.filter((e: any) => e.user_message !== null)
  t.equal(answered.length, 2)
  for (const [i, entry] of answered.entries()) {
    const stages: Stage[] = entry.latency_breakdown.stages
    const at = (name: string) => stages.find((s) => s.name === name)?.at_ms ?? Number.NaN
    const seen = witnesses[i] as Witness
    // Each stage against what the test saw happen: the gateway's origin (the end of speech) is no earlier than the
    // audio was sent, so a stage is at most the time from the send to the test's sighting of its effect ...
    const bounds = `stages ${JSON.stringify(stages)}, seen ${JSON.stringify(seen)}`
    t.ok(at('webhook_sent') <= seen.webhookArrivedAt - seen.sentAt, `turn ${i + 1}: the webhook left before the backend got it (${bounds})`)
    t.ok(at('first_frame_out') <= seen.firstFrameAt - seen.sentAt, `turn ${i + 1}: the first frame was written before the phone got it`)
    t.ok(entry.latency_ms <= seen.readAt - seen.sentAt, `turn ${i + 1}: the latency is no longer than the test waited for it`)
    // ... and the backend's scripted delays are in it: no reply byte before its headers, no text before its delay.
    t.ok(
      at('reply_first_byte') - at('webhook_sent') >= HEADERS_DELAY_MS - TIMER_SLACK_MS,
      `turn ${i + 1}: the backend's header delay is in the breakdown`,
    )
    t.ok(
      at('reply_first_text') - at('webhook_sent') >= HEADERS_DELAY_MS + TEXT_DELAY_MS - TIMER_SLACK_MS,
      `turn ${i + 1}: the backend's text delay is in the breakdown`,
    )
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
