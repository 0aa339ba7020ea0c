/**
 * `response.dtmf` on a SIP call: a phone that negotiated telephone-event receives the digits as RFC 4733 events
 * (one event per digit, marker on its first packet, one timestamp per event, growing durations, three end
 * reports) at the agent's tone and gap lengths, and no in-band tones; a phone that did not negotiate it hears
 * the tones in-band as on a carrier call.
 */
import t, { type Test } from 'tap'
import { decodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { decodeTelephoneEvent } from '../../transports/sip/media/telephone-event-codec.js'
import { detectDtmf } from '../fakes/carrier/dtmf-decoder.js'
import { eventually, newBackendTenant } from '../carrier-e2e/carrier-setup.js'
import { type HeardPacket, SipCaller } from '../helpers/sip-caller.js'
import { addTrunk, startSipWorld } from './sip-setup.js'

const { c, sipPort, ...world } = await startSipWorld(t)
const { tenant, backend } = await newBackendTenant(t, c, 'sip-dtmf-token')
backend.reply = (req) => ({
  kind: 'sse',
  steps:
    req.json.type === 'session.start'
      ? [
          { data: { type: 'response.tts', turn_id: req.json.turn_id, content: 'Menu.' } },
          { data: { type: 'response.dtmf', turn_id: req.json.turn_id, digits: '1w#', tone_ms: 60, gap_ms: 100 } },
          { data: { type: 'response.end', turn_id: req.json.turn_id } },
        ]
      : [{ data: { type: 'response.end', turn_id: req.json.turn_id } }],
})
await addTrunk({ c, ...world }, tenant.apiKey, { allowed_cidrs: ['127.0.0.1'] })

async function call(t: Test, telephoneEvent: boolean): Promise<SipCaller> {
  const p = await SipCaller.open({ host: '127.0.0.1', port: sipPort })
  t.teardown(() => p.close())
  p.invite(tenant.number, { telephoneEvent })
  const ok = await p.final()
  if (ok.status !== 200) throw new Error(`${ok.status} ${ok.reason}`)
  p.ack(ok)
  return p
}

/** The telephone-event packets received, one group per event (by timestamp), in arrival order. */
function events(heard: readonly HeardPacket[]): HeardPacket[][] {
  const groups = new Map<number, HeardPacket[]>()
  for (const h of heard.filter((h) => h.payloadType === 101)) groups.set(h.timestamp, [...(groups.get(h.timestamp) ?? []), h])
  return [...groups.values()]
}

t.test('with telephone-event negotiated, the digits go out as RFC 4733 events, not as tones', async (t) => {
  const p = await call(t, true)
  const digits = await eventually(async () => {
    const groups = events(p.heard)
    return groups.length === 2 && groups[1]!.filter((h) => decodeTelephoneEvent(h.payload)?.end).length === 3 ? groups : undefined
  }, 10_000)
  for (const [i, [digit, event]] of [
    ['1', 1],
    ['#', 11],
  ].entries()) {
    const packets = digits[i]!
    const reports = packets.map((h) => decodeTelephoneEvent(h.payload)!)
    t.ok(
      reports.every((r) => r.event === event),
      `${digit}: every report is event ${event}`,
    )
    t.same(
      packets.map((h) => h.marker),
      [true, false, false, false, false],
      `${digit}: marker on the first packet only`,
    )
    t.same(
      reports.map((r) => [r.duration, r.end]),
      [
        [160, false],
        [320, false],
        [480, true],
        [480, true],
        [480, true],
      ],
      `${digit}: durations grow by 20 ms to the 60 ms tone, and the end report goes out three times`,
    )
    const jumps = packets.slice(1).filter((h, j) => h.sequence !== ((packets[j]!.sequence + 1) & 0xffff))
    t.equal(jumps.length, 0, `${digit}: consecutive sequence numbers`)
  }
  // From the first digit's start to the second's: one tone, one gap and the `w` pause.
  const spanMs = 60 + 100 + 500
  const [first, second] = [digits[0]![0]!, digits[1]![0]!]
  t.equal((second.sequence - first.sequence) & 0xffff, spanMs / 20, 'every 20 ms slot of the tone, the gap and the pause went out')
  // RTP's timestamp is the sampling clock (RFC 3550 5.1): a pacer more than 60 ms late skips the missed slots
  // without packets and the clock moves on, so on a stalled machine the second digit starts later by whole slots.
  // Such a stall shows at this end as packets missing for that long; without one, the start is exact.
  const between = p.heard.filter((h) => h.at >= first.at && h.at <= second.at)
  const longestGap = Math.max(...between.slice(1).map((h, i) => h.at - between[i]!.at))
  const late = ((second.timestamp - first.timestamp) >>> 0) - spanMs * 8
  if (longestGap < 60) t.equal(late, 0, 'the second digit starts one tone, one gap and the `w` pause after the first')
  else t.ok(late >= 0 && late % 160 === 0 && late / 8 <= longestGap, `a ${longestGap} ms stall moved the clock ${late / 8} ms on`)
  const audio = Buffer.concat(p.heard.filter((h) => h.payloadType === 0).map((h) => h.payload))
  t.same(detectDtmf(decodeMulaw(audio)), [], 'no in-band tones')
})

t.test('without telephone-event, the digits are played in-band', async (t) => {
  const p = await call(t, false)
  const heard = await eventually(async () => {
    const audio = Buffer.concat(p.heard.filter((h) => h.payloadType === 0).map((h) => h.payload))
    const found = detectDtmf(decodeMulaw(audio))
    return found.length >= 2 ? found : undefined
  }, 10_000)
  t.same(
    heard.map((d) => d.digit),
    ['1', '#'],
  )
  t.equal(p.heard.filter((h) => h.payloadType !== 0).length, 0, 'no telephone-event packets')
})
