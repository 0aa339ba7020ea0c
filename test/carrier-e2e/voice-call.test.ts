import t from 'tap'
import { callTenant, eventually, newBackendTenant, sessionOfCall, speech, sse, startVoiceWorld } from './carrier-setup.js'
import { newCallSid } from '../fakes/carrier/phone-simulator.js'

// Speech vendors and the customer backend are local fakes speaking their real protocols.
const { c, transcripts } = await startVoiceWorld(t)

const TOKEN = 'voice-call-token'
const { tenant, backend } = await newBackendTenant(t, c, TOKEN)

/** Places a call (each test scripts its own transcripts); requests of other calls are not looked at. */
async function connect(callSid: string, playbackSpeed = 1, say: string[] = []) {
  transcripts.length = 0
  transcripts.push(...say)
  const r = await callTenant(c, tenant, { callSid, realtime: true, silenceWhenIdle: true, playbackSpeed })
  if (r.outcome !== 'connected') throw new Error(`call not connected: ${JSON.stringify(r)}`)
  const row = await eventually(async () => sessionOfCall(c, callSid))
  const waitRequest = (pred: (json: any) => boolean, timeoutMs = 15_000) =>
    eventually(async () => backend.requests.find((r) => r.json?.session_id === row.id && pred(r.json)), timeoutMs)
  return { call: r.call, sessionId: row.id, waitRequest }
}

t.test("an inbound call's words reach the backend and the reply comes back as audio", async (t) => {
  const callSid = newCallSid()
  backend.reply = (req) =>
    sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello, how can I help?' : 'Your invoice is on its way.')
  const { call, waitRequest } = await connect(callSid, 1, ['please send me the invoice'])
  const welcome = await waitRequest((j) => j.type === 'session.start')
  t.match(welcome.json, { from_phone_number: '+442071838750', to_phone_number: tenant.number })
  await eventually(async () => (call.marks.some((m) => m.echoedAt !== undefined) ? true : undefined), 10_000)
  const before = call.receivedAudio().length
  t.ok(before > 0, 'the welcome was heard')
  await call.sendAudio(speech('two-phrases.wav'))
  const msg = await waitRequest((j) => j.type === 'message' && j.text === 'please send me the invoice')
  t.ok(msg.signatureValid, 'signed')
  t.match(msg.json, { from_phone_number: '+442071838750', to_phone_number: tenant.number })
  await eventually(async () => (call.receivedAudio().length > before ? true : undefined), 10_000)
  t.same(call.errors, [], 'only well-formed carrier frames for our stream')
  const kinds = new Set(call.messages.map((m) => m.event))
  t.same([...kinds].sort(), ['mark', 'media'])
  await call.hangup()
  const row = await eventually(async () => {
    const s = await sessionOfCall(c, callSid)
    return s?.status === 'ended' ? s : undefined
  })
  t.equal(row.end_reason, 'caller_hangup')
})

t.test('DTMF reaches the backend as a data event', async (t) => {
  const callSid = newCallSid()
  backend.reply = (req) => (req.json.type === 'data' ? { kind: 'json', body: {} } : sse(req.json.turn_id, 'Hi.'))
  const { call, waitRequest } = await connect(callSid, Infinity)
  await waitRequest((j) => j.type === 'session.start')
  call.sendDtmf('5')
  const data = await waitRequest((j) => j.type === 'data' && j.data?.dtmf === '5')
  t.match(data.json, { data: { dtmf: '5' } })
  await call.hangup()
})

t.test('barge-in clears playback', async (t) => {
  const callSid = newCallSid()
  // Long enough to still be playing when the caller's words come: barge-in waits for them (a backchannel does not
  // cut the agent off), and this STT fake gives them only when asked to finalize, at the end of speech.
  const long = 'Let me read you the whole list of our opening hours for every single day of the week, one by one. '.repeat(3)
  backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? long : 'Sure.')
  const { call } = await connect(callSid, 1, ['stop please'])
  await eventually(async () => (call.earpiece.queuedMs() > 500 ? true : undefined), 10_000)
  await call.sendAudio(speech('two-phrases.wav', 500))
  await eventually(async () => (call.clears.length > 0 ? true : undefined), 10_000)
  t.ok(call.clears[0]!.droppedBytes > 0, 'unplayed audio was dropped')
  await call.hangup()
})

t.test('response.hangup: the farewell plays, then the gateway ends the call', async (t) => {
  const callSid = newCallSid()
  backend.reply = (req) =>
    req.json.type === 'session.start'
      ? sse(req.json.turn_id, 'Hi.')
      : { kind: 'sse', steps: [{ data: { type: 'response.hangup', content: 'Goodbye, have a nice day.', turn_id: req.json.turn_id } }] }
  const { call, waitRequest } = await connect(callSid, 4, ['that is all, bye'])
  await waitRequest((j) => j.type === 'session.start')
  await call.sendAudio(speech('two-phrases.wav'))
  const end = await call.ended
  t.equal(end.by, 'server')
  t.ok(call.marks.length > 0 && call.marks.every((m) => m.echoedAt !== undefined && !m.cleared), 'every mark played before the close')
  const row = await eventually(async () => {
    const s = await sessionOfCall(c, callSid)
    return s?.status === 'ended' ? s : undefined
  })
  t.equal(row.end_reason, 'hangup')
})

const REPLY = 'Here is a very long answer that the caller will not wait to hear in full. '.repeat(3)

t.test('a caller hanging up mid-reply ends the session with its transcript saved', async (t) => {
  const callSid = newCallSid()
  backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hi.' : REPLY)
  const { call, waitRequest } = await connect(callSid, 1, ['tell me everything'])
  await waitRequest((j) => j.type === 'session.start')
  await eventually(async () => (call.marks.length > 0 && call.earpiece.pendingMarks().length === 0 ? true : undefined), 10_000)
  const heard = call.receivedAudio().length
  // The phone keeps sending silence after the words (silenceWhenIdle).
  void call.sendAudio(speech('two-phrases.wav', 0))
  await waitRequest((j) => j.type === 'message' && j.text === 'tell me everything')
  await eventually(async () => (call.receivedAudio().length > heard + 1600 ? true : undefined), 10_000)
  await call.hangup()
  // The fake speaks 20 ms per character: the whole reply is ~4.4 s (35,000 bytes of mu-law).
  t.ok(call.playedAudio().length - heard < 30_000, 'hung up before the reply had played')
  const row = await eventually(async () => {
    const s = await sessionOfCall(c, callSid)
    return s?.status === 'ended' ? s : undefined
  })
  t.equal(row.end_reason, 'caller_hangup')
  const details = await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/${row.id}`, { key: tenant.apiKey })
  const users = details.body.transcript.map((x: { user_message: string | null }) => x.user_message)
  t.ok(users.includes('tell me everything'), 'the user turn is saved', { transcript: details.body.transcript })
  const entry = details.body.transcript.find((x: { user_message: string | null }) => x.user_message === 'tell me everything')
  const said: string = entry?.assistant_message ?? ''
  t.ok(REPLY.trim().startsWith(said) && said.length < REPLY.trim().length, `only the part heard is kept: ${JSON.stringify(said)}`)
})
