/**
 * Warm transfer on the carrier path, end to end with the fake Calls API and simulated phones: the
 * backend answers the welcome with `response.transfer` `mode: "warm"`; the gateway dials the human as a second leg
 * whose media stream comes back to it, holds the caller, whispers to the human only, and on keypad 1 bridges the
 * two streams (tones measured both ways); a decline (2) and a no-answer bring the caller back to the agent, which
 * is asked `transfer.failed` and speaks. One gateway for the file; every wait is on an event.
 */
import t from 'tap'
import wavefile from 'wavefile'
import { WebSocket } from 'ws'
import { postSignedForm } from '../fakes/carrier/sign.js'
import { FakeCallsApi } from '../fakes/carrier/fake-calls-api.js'
import type { FakeCall } from '../fakes/carrier/fake-call.js'
import { newCallSid, type SimulatedCall } from '../fakes/carrier/phone-simulator.js'
import type { BackendReply } from '../fakes/backend/fake-backend.js'
import { decodeMulaw, encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { holdAudioFrame } from '../../gateway/transfer/hold-audio.js'
import { TRANSFER_FAILED_DEFAULT_LINES } from '../../pipeline/agent/transfer-failed-body.js'
import { dualToneFrames, toneFrames } from '../helpers/tones.js'
import { callTenant, eventually, newBackendTenant, sessionOfCall, sse, startVoiceWorld } from './carrier-setup.js'

const HUMAN = '+14155550100'
const CALLER = '+442071838750'
const TOKEN = 'warm-transfer-token'

const { c, transcripts } = await startVoiceWorld(t)
const api = await FakeCallsApi.start({ authToken: TOKEN, stepMs: 5, rewriteUrl: c.rewrite })
t.teardown(() => api.close())
const { tenant, backend } = await newBackendTenant(t, c, TOKEN)
{
  // The transfer's lifecycle webhooks (opt-in) go to the same fake, under a path of their own.
  const events = ['transfer.started', 'transfer.answered', 'transfer.connected', 'transfer.failed']
  const agent = (await c.gw.request('GET', `/v1/agents/${tenant.agentId}`, { key: tenant.apiKey })).body
  const config = { ...agent.config, session_webhook: { url: `${backend.url}/lifecycle`, events } }
  const r = await c.gw.request('POST', `/v1/agents/${tenant.agentId}`, { key: tenant.apiKey, body: { config } })
  if (r.status !== 200) throw new Error(r.text)
}
{
  // Recording on: the caller's side keeps being recorded, and the recording's tap must pass the transfer on.
  const org = await c.gw.request('PATCH', `/admin/v1/organizations/${tenant.orgId}`, { admin: true, body: { recording_enabled: true } })
  if (org.status !== 200) throw new Error(org.text)
  const r = await c.gw.request('PUT', `/admin/v1/organizations/${tenant.orgId}/carrier`, {
    admin: true,
    body: { account_sid: api.accountSid, auth_token: TOKEN, api_base_url: api.baseUrl },
  })
  if (r.status !== 200) throw new Error(r.text)
}

/** Agent webhook requests (not the lifecycle webhooks) of `type`. */
function agentRequests(type: string) {
  return backend.requests.filter((r) => r.json.type === type && !r.path.endsWith('/lifecycle'))
}

/** Lifecycle webhooks of the session `sessionId`, in arrival order. */
function lifecycle(sessionId: string) {
  return backend.requests.filter((r) => r.path.endsWith('/lifecycle') && r.json.session_id === sessionId).map((r) => r.json)
}

/** The welcome asks for a warm transfer with `fields`; `transfer.failed` is answered by `onFailed`. */
function script(fields: Record<string, unknown>, onFailed: (turnId: string) => BackendReply): void {
  backend.reply = (req) => {
    const turnId = req.json.turn_id as string
    if (req.json.type === 'session.start') {
      return { kind: 'sse', steps: [{ data: { type: 'response.transfer', turn_id: turnId, mode: 'warm', to: HUMAN, ...fields } }] }
    }
    if (req.path.endsWith('/lifecycle')) return { kind: 'json', body: {} }
    if (req.json.type === 'transfer.failed') return onFailed(turnId)
    return sse(turnId, 'ok')
  }
}

/** An inbound call the fake carrier knows; the human's leg (the next call created) with it. */
async function callAndHuman(from = CALLER): Promise<{ callSid: string; caller: SimulatedCall; human: Promise<FakeCall> }> {
  const human = api.nextCall()
  const callSid = newCallSid()
  const r = await callTenant(c, tenant, { callSid, from, realtime: true, silenceWhenIdle: true, playbackSpeed: 4 })
  if (r.outcome !== 'connected') throw new Error(`call not connected: ${JSON.stringify(r)}`)
  api.addInbound(callSid, r.call)
  return { callSid, caller: r.call, human }
}

/** Frames (20 ms) of `audio` (mu-law) in which `hz` holds most of the energy and the level is well above silence. */
function muLawToneFrames(audio: Buffer, hz: number): number {
  return toneFrames(decodeMulaw(audio, new Int16Array(audio.length)), hz, 8000)
}

/** The same on PCM16 8 kHz samples (a recording's channel). */
const pcmToneFrames = (pcm: Int16Array, hz: number) => toneFrames(pcm, hz, 8000)

/** A tone as the phone sends it (mu-law 8 kHz). */
function tone(hz: number, ms: number): Buffer {
  const n = (8000 * ms) / 1000
  const pcm = new Int16Array(n)
  for (let i = 0; i < n; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / 8000))
  return Buffer.from(encodeMulaw(pcm))
}

async function endedRow(callSid: string) {
  return eventually(async () => {
    const s = await sessionOfCall(c, callSid)
    return s?.status === 'ended' ? s : undefined
  })
}

t.test('accepted with 1: whisper to the human only, then tones cross the bridge both ways', async (t) => {
  api.outcome = { kind: 'answer', realtime: true, silenceWhenIdle: true, playbackSpeed: 4 }
  script({ whisper: 'A caller about a refund.', hold: 'Please hold.', timeout_s: 20, transcribe: true }, (id) => sse(id, 'unexpected'))
  const { callSid, caller, human: dialled } = await callAndHuman()
  const human = await dialled
  t.equal(human.params.to, HUMAN, 'the human is dialled')
  t.equal(human.params.from, CALLER, "the caller's number is the caller id")
  t.match(
    human.params.twiml,
    /<Connect><Stream url="wss:\/\/voice\.example\.test\/[^"]*tl_/,
    'markup streams the leg back with a transfer token',
  )
  t.match(human.params.statusCallback, /\/v1\/agents\/carrier\/status\?leg=tl_/, 'its callbacks name the leg')
  const leg = await eventually(async () => (human.phone?.outcome === 'connected' ? human.phone.call : undefined))
  await leg.waitFor(() => leg.marks.some((m) => m.name.startsWith('whisper') && m.echoedAt !== undefined), 5000)
  const whisper = leg.receivedAudio()
  t.ok(whisper.length > 1600, `the human heard the whisper (${whisper.length} bytes)`)
  // The fake TTS speaks a 440 Hz tone, 20 ms per character: the caller got the hold line's 12 characters of it, the
  // human the whisper and the prompt (69 characters).
  const callerHeard = caller.receivedAudio()
  const whisperFrames = muLawToneFrames(whisper, 440)
  t.ok(whisperFrames >= 60, `the whisper is speech (${whisperFrames} frames)`)
  t.ok(
    muLawToneFrames(callerHeard, 440) <= 14,
    `the caller got the hold line (${muLawToneFrames(callerHeard, 440)} frames) and not the whisper`,
  )
  const hold = Buffer.from(encodeMulaw(holdAudioFrame(8000, 5)))
  t.ok(callerHeard.indexOf(hold) >= 0, 'the caller got hold audio meanwhile')
  const sessions = await c.gw.store.db.selectFrom('sessions').select('id').where('call_sid', '=', human.sid).execute()
  t.equal(sessions.length, 0, 'the human leg is no agent session')

  // Both legs are transcribed while bridged (transcribe: true): the speech-to-text fake answers each leg's last
  // utterance, asked for when the bridge ends, with these (the caller's leg first).
  transcripts.length = 0
  transcripts.push('I would like a refund please', 'Sure I can help with that')
  const clears = caller.clears.length
  leg.sendDtmf('1')
  await caller.waitFor(() => caller.clears.length > clears, 3000)
  const callerFrom = caller.receivedAudio().length
  const humanFrom = leg.receivedAudio().length
  void caller.sendAudio(tone(440, 400))
  const humanTone = leg.sendAudio(tone(1000, 400))
  await leg.waitFor(() => muLawToneFrames(leg.receivedAudio().subarray(humanFrom), 440) >= 10, 4000)
  await caller.waitFor(() => muLawToneFrames(caller.receivedAudio().subarray(callerFrom), 1000) >= 10, 4000)
  t.ok(muLawToneFrames(leg.receivedAudio().subarray(humanFrom), 440) >= 10, "the caller's 440 Hz tone reached the human")
  t.ok(muLawToneFrames(caller.receivedAudio().subarray(callerFrom), 1000) >= 10, "the human's 1 kHz tone reached the caller")
  t.equal(muLawToneFrames(caller.receivedAudio().subarray(callerFrom), 440), 0, 'the caller does not hear itself')

  // The whole tone crossed before the human hangs up (the recording keeps it: see below).
  await humanTone
  await caller.waitFor(() => muLawToneFrames(caller.receivedAudio().subarray(callerFrom), 1000) >= 18, 4000)
  await leg.hangup()
  const end = await caller.ended
  t.equal(end.by, 'server', "the human's hang-up ended the caller's leg")
  const row = await endedRow(callSid)
  t.equal(row.end_reason, 'transfer_human_hangup', 'the end reason says the human hung up')
  t.equal(agentRequests('transfer.failed').length, 0, 'no transfer.failed')
  // The recording has both parties: the caller's tone on the left, the human's (what the caller heard) on the right.
  const recorded = await eventually(async () => {
    const d = await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/${row.id}`, { key: tenant.apiKey })
    return d.body.recording_status === 'completed' ? d.body : undefined
  })
  const res = await fetch(`${c.gw.url}/v1/agents/${tenant.agentId}/sessions/${row.id}/recording`, {
    headers: { authorization: `Bearer ${tenant.apiKey}` },
  })
  const wav = new wavefile.WaveFile(Buffer.from(await res.arrayBuffer()))
  const [left, right] = wav.getSamples(false, Int16Array) as unknown as [Int16Array, Int16Array]
  t.ok(recorded.recording_url, 'recorded')
  // The session details (and the console, which reads them) show the attempt with its timings.
  t.equal(recorded.transfers.length, 1, 'one transfer in the details')
  t.match(recorded.transfers[0], { mode: 'warm', to: HUMAN, started_at: String })
  t.ok(
    recorded.transfers[0].connected_after_ms >= recorded.transfers[0].answered_after_ms && recorded.transfers[0].answered_after_ms > 0,
    `answered after ${recorded.transfers[0].answered_after_ms} ms, connected after ${recorded.transfers[0].connected_after_ms} ms`,
  )
  t.equal(recorded.transfers[0].failed_reason, undefined, 'and no failure')
  const lines = await eventually(async () => {
    const d = await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/${row.id}`, { key: tenant.apiKey })
    return d.body.transfers[0].transcript?.length === 2 ? d.body.transfers[0].transcript : undefined
  })
  t.match(
    lines,
    [
      { speaker: 'caller', text: 'I would like a refund please', at_ms: Number },
      { speaker: 'human', text: 'Sure I can help with that', at_ms: Number },
    ],
    'both legs transcribed for the record, in the transfer of the details',
  )
  t.match(await (await fetch(`${c.gw.url}/metrics`)).text(), /^voxgate_warm_transfers_total\{outcome="connected"\} 1$/m, 'counted')
  // The recording lists the transfer's hold (dialling to acceptance): not speech time of the caller's.
  const meta = await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/${row.id}/recording/metadata`, { key: tenant.apiKey })
  t.equal(meta.body.held.length, 1, 'one held span in the recording metadata')
  t.match(meta.body.held[0], { kind: 'transfer_hold', from_ms: Number, to_ms: Number })
  t.ok(meta.body.held[0].to_ms > meta.body.held[0].from_ms, `held ${meta.body.held[0].to_ms - meta.body.held[0].from_ms} ms`)
  t.ok(pcmToneFrames(left, 440) >= 10, "the caller's tone is on the caller's channel")
  t.ok(pcmToneFrames(right, 1000) >= 10, "the human's tone is on the channel of what the caller heard")
  const events = await eventually(async () => {
    const e = lifecycle(row.id)
    return e.length >= 3 ? e : undefined
  })
  t.strictSame(
    events.map((e) => e.type),
    ['transfer.started', 'transfer.answered', 'transfer.connected'],
    'lifecycle webhooks',
  )
  const connected = events[2]!
  t.equal(connected.to, HUMAN)
  t.ok(connected.elapsed_ms >= connected.answered_after_ms && connected.answered_after_ms > 0, 'with timings')
  backend.requests.length = 0
})

t.test('declined with 2: the caller is back with the agent, which is told and speaks', async (t) => {
  api.outcome = { kind: 'answer', realtime: true, silenceWhenIdle: true, playbackSpeed: 4 }
  script({ whisper: 'A caller about a refund.', timeout_s: 20 }, (id) => sse(id, 'Nobody is free right now.'))
  const { callSid, caller, human: dialled } = await callAndHuman()
  const human = await dialled
  const leg = await eventually(async () => (human.phone?.outcome === 'connected' ? human.phone.call : undefined))
  await leg.waitFor(() => leg.marks.some((m) => m.name.startsWith('whisper') && m.echoedAt !== undefined), 5000)
  leg.sendDtmf('2')
  await leg.ended
  const failed = await eventually(async () => agentRequests('transfer.failed')[0])
  t.equal(failed.json.reason, 'declined')
  t.equal(failed.json.to, HUMAN)
  const row = await eventually(async () => sessionOfCall(c, callSid))
  const said = await eventually(async () => {
    const rows = await c.gw.store.db.selectFrom('transcript_entries').select('assistant_message').where('session_id', '=', row.id).execute()
    return rows.find((e) => e.assistant_message === 'Nobody is free right now.')
  })
  t.ok(said, "the backend's reply was spoken to the caller")
  const lost = await eventually(async () => lifecycle(row.id).find((e) => e.type === 'transfer.failed'))
  t.match(lost, { reason: 'declined', failed_in: 'awaiting_acceptance', to: HUMAN }, 'transfer.failed lifecycle webhook')
  const details = await eventually(async () => {
    const d = await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/${row.id}`, { key: tenant.apiKey })
    return d.body.transfers?.[0]?.failed_reason === undefined ? undefined : d.body
  })
  t.match(
    details.transfers,
    [{ mode: 'warm', to: HUMAN, answered_after_ms: Number, failed_reason: 'declined', failed_in: 'awaiting_acceptance' }],
    'the details show the attempt and why it failed',
  )
  t.match(await (await fetch(`${c.gw.url}/metrics`)).text(), /^voxgate_warm_transfers_total\{outcome="declined"\} 1$/m, 'counted')
  await human.done
  t.ok(['completed', 'canceled'].includes(human.status), `the human leg is over (${human.status})`)
  t.ok(caller.isOpen, 'the call goes on')
  await caller.hangup()
  backend.requests.length = 0
})

t.test('no answer: the caller hears the default line and the backend is told no_answer', async (t) => {
  api.outcome = { kind: 'no-answer' }
  script({ timeout_s: 20 }, (id) => ({ kind: 'sse', steps: [{ data: { type: 'response.end', turn_id: id } }] }))
  const { callSid, caller, human: dialled } = await callAndHuman()
  const human = await dialled
  await human.done
  const failed = await eventually(async () => agentRequests('transfer.failed')[0])
  t.equal(failed.json.reason, 'no_answer')
  const row = await eventually(async () => sessionOfCall(c, callSid))
  const said = await eventually(async () => {
    const rows = await c.gw.store.db.selectFrom('transcript_entries').select('assistant_message').where('session_id', '=', row.id).execute()
    return rows.find((e) => e.assistant_message === TRANSFER_FAILED_DEFAULT_LINES.no_answer)
  })
  t.ok(said, 'the default line was spoken (the reply said nothing)')
  t.ok(caller.isOpen, 'the call goes on')
  await caller.hangup()
  const ended = await endedRow(callSid)
  t.equal(ended.end_reason, 'caller_hangup')
})

t.test('an answering machine on the human leg is voicemail', async (t) => {
  backend.requests.length = 0
  api.outcome = { kind: 'answer', realtime: true, silenceWhenIdle: true, playbackSpeed: 4, answeredBy: 'machine_start', amdAfterMs: 50 }
  script({ whisper: 'A caller about a refund.', timeout_s: 20 }, (id) => sse(id, 'I reached a voicemail.'))
  const { caller, human: dialled } = await callAndHuman()
  const human = await dialled
  t.equal(human.params.machineDetection, 'DetectMessageEnd', 'the leg is dialled with machine detection')
  const failed = await eventually(async () => agentRequests('transfer.failed')[0])
  t.equal(failed.json.reason, 'voicemail')
  await human.done
  t.ok(caller.isOpen, 'the call goes on')
  await caller.hangup()
})

t.test('the caller hangs up while the human rings: the leg is cancelled, the session ends caller_hangup', async (t) => {
  backend.requests.length = 0
  api.outcome = { kind: 'manual' }
  script({ timeout_s: 20 }, (id) => sse(id, 'unexpected'))
  const { callSid, caller, human: dialled } = await callAndHuman()
  const human = await dialled
  await human.progress('ringing')
  const statusUrl = human.params.statusCallback ?? ''
  const forged = await postSignedForm({
    postTo: c.rewrite(statusUrl),
    signedUrl: statusUrl,
    form: { AccountSid: api.accountSid, CallSid: human.sid, CallStatus: 'busy' },
    authToken: 'not-the-token',
  })
  t.equal(forged.status, 403, "a leg's callback is checked with the organization's token")
  const stream = /url="([^"]+)"/.exec(human.params.twiml ?? '')?.[1] ?? ''
  const refused = await new Promise<number>((resolve) => {
    const ws = new WebSocket(c.rewrite(stream.replace(/tl_[^/]+$/, 'tl_unknown')))
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0))
    ws.on('open', () => resolve(101))
    ws.on('error', () => undefined)
  })
  t.equal(refused, 401, 'an unknown transfer leg token opens nothing')
  await caller.hangup()
  t.equal(await human.done, 'canceled', 'the human leg was hung up through the Calls API')
  const row = await endedRow(callSid)
  t.equal(row.end_reason, 'caller_hangup')
  const lost = await eventually(async () => lifecycle(row.id).find((e) => e.type === 'transfer.failed'))
  t.equal(lost.reason, 'caller_hung_up')
  t.equal(agentRequests('transfer.failed').length, 0, 'nobody to give back: the agent is not asked')
})

t.test('accept "none" without a whisper bridges on answer; the caller hanging up ends both legs', async (t) => {
  backend.requests.length = 0
  api.outcome = { kind: 'answer', realtime: true, silenceWhenIdle: true, playbackSpeed: 4 }
  script({ accept: 'none', timeout_s: 20 }, (id) => sse(id, 'unexpected'))
  const { callSid, caller, human: dialled } = await callAndHuman()
  const human = await dialled
  const leg = await eventually(async () => (human.phone?.outcome === 'connected' ? human.phone.call : undefined))
  const row = await eventually(async () => sessionOfCall(c, callSid))
  await eventually(async () => lifecycle(row.id).find((e) => e.type === 'transfer.connected'))
  const from = leg.receivedAudio().length
  void caller.sendAudio(tone(440, 300))
  await leg.waitFor(() => muLawToneFrames(leg.receivedAudio().subarray(from), 440) >= 8, 4000)
  t.equal(muLawToneFrames(leg.receivedAudio().subarray(0, from), 440), 0, 'the human heard no whisper nor prompt')
  await caller.hangup()
  await leg.ended
  t.equal(await human.done, 'completed', "the caller's hang-up ended the human's leg")
  const ended = await endedRow(callSid)
  t.equal(ended.end_reason, 'transfer_caller_hangup', 'the end reason says the caller hung up')
})

t.test('without a hold line the caller hears the ringback of its country while the human rings', async (t) => {
  // Frequencies, and the longest burst of the cadence in frames: the UK's 0.4 s, North America's 2 s.
  for (const [from, hz, burst, name] of [
    [CALLER, [400, 450], [15, 22], 'the UK double ring (400 + 450 Hz) for a +44 caller'],
    ['+12025550143', [440, 480], [80, 101], 'the North American ring (440 + 480 Hz) for a +1 caller'],
  ] as const) {
    backend.requests.length = 0
    api.outcome = { kind: 'manual' }
    script({ timeout_s: 20 }, (id) => sse(id, 'unexpected'))
    const { caller, human: dialled } = await callAndHuman(from)
    const human = await dialled
    await human.progress('ringing')
    const from0 = caller.receivedAudio().length
    // Three seconds of ringing (the gateway paces what it sends in real time).
    await new Promise((r) => setTimeout(r, 3_200))
    const audio = caller.receivedAudio().subarray(from0)
    const pcm = decodeMulaw(audio, new Int16Array(audio.length))
    const heard = dualToneFrames(pcm, hz)
    t.ok(heard.tone >= 25, `${name}: ${heard.tone} frames of it`)
    t.ok(heard.quiet >= 25, `with its cadence's silences (${heard.quiet} quiet frames)`)
    t.ok(
      heard.longestRun >= burst[0] && heard.longestRun <= burst[1],
      `in its country's cadence (longest burst ${heard.longestRun} frames)`,
    )
    t.equal(muLawToneFrames(audio, 784), 0, 'no hold chime')
    await caller.hangup()
    await human.done
  }
})
