import t from 'tap'
import {
  callTenant,
  connectTwoTurnCall,
  eventually,
  newBackendTenant,
  newNumber,
  sessionOfCall,
  speech,
  startVoiceWorld,
} from './carrier-setup.js'
import { newCallSid } from '../fakes/carrier/phone-simulator.js'
import { parseScrape } from '../metrics/prom-text.js'

// /metrics scraped while a simulated phone call runs (speech vendors and the backend are local fakes), parsed
// with a Prometheus text-format parser.
const { c, transcripts } = await startVoiceWorld(t)
const { tenant, backend } = await newBackendTenant(t, c, 'metrics-token')

const scrape = async () => {
  const r = await fetch(`${c.gw.url}/metrics`)
  if (r.status !== 200) throw new Error(`scrape answered ${r.status}`)
  return parseScrape(await r.text())
}

t.test("a call's turns, session and webhooks show in the scrape while it runs", async (t) => {
  const { callSid, call, row } = await connectTwoTurnCall(c, tenant, backend, transcripts)
  const waitRequest = (pred: (json: any) => boolean) =>
    eventually(async () => backend.requests.find((q) => q.json?.session_id === row.id && pred(q.json)), 15_000)
  const answeredTurns = async () => {
    const d = (await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/${row.id}`, { key: tenant.apiKey })).body
    return d.transcript.filter((e: any) => e.user_message !== null && e.latency_ms !== null).length
  }
  await waitRequest((j) => j.type === 'session.start')
  await call.sendAudio(speech('two-phrases.wav'))
  await eventually(async () => ((await answeredTurns()) === 1 ? true : undefined), 15_000)
  await call.sendAudio(speech('two-phrases.wav'))
  await eventually(async () => ((await answeredTurns()) === 2 ? true : undefined), 15_000)

  const during = await scrape()
  t.ok(during.names.has('voxgate_turn_latency_seconds'), 'the turn latency histogram is declared')
  t.equal(during.value('voxgate_live_sessions', { channel: 'carrier' }), 1, 'the call is live')
  t.equal(during.value('voxgate_session_starts_total', { channel: 'carrier' }), 1)
  t.equal(during.value('voxgate_turn_latency_seconds_count'), 2, 'the turn histogram counts the call’s two answered turns')
  for (const stage of ['transcript_final', 'webhook_sent', 'tts_first_audio', 'first_frame_out', 'first_audio_heard']) {
    t.equal(during.value('voxgate_turn_stage_duration_seconds_count', { stage }), 2, `stage ${stage} observed per turn`)
  }
  t.equal(during.value('voxgate_webhook_deliveries_total', { kind: 'agent', outcome: 'delivered' }), 3, 'welcome and two messages')
  t.ok((during.value('voxgate_vad_batch_size_count') ?? 0) > 0, 'the VAD ran batches for the caller audio')
  t.equal(during.value('voxgate_vad_skipped_frames_total'), 0)

  await call.hangup()
  await eventually(async () => ((await sessionOfCall(c, callSid))?.status === 'ended' ? true : undefined))
  // The row says ended before the process has finished its own bookkeeping of the session (the gauge follows).
  await eventually(async () => ((await scrape()).value('voxgate_live_sessions', { channel: 'carrier' }) === 0 ? true : undefined))
  const after = await scrape()
  t.equal(after.value('voxgate_live_sessions', { channel: 'carrier' }), 0, 'gone once it ended')
  t.equal(after.value('voxgate_session_starts_total', { channel: 'carrier' }), 1, 'still counted once as started')
})

t.test('a call to a number nobody holds is counted as a refusal', async (t) => {
  const r = await callTenant(c, { ...tenant, number: newNumber() }, { callSid: newCallSid() })
  t.equal(r.outcome, 'refused')
  t.equal((await scrape()).value('voxgate_session_refusals_total', { channel: 'carrier', reason: 'not_in_service' }), 1)
})
