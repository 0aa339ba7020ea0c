/**
 * Warm transfer of a browser caller: a website visitor handed to a human on the phone. The backend
 * answers the welcome with `response.transfer` `mode: "warm"`; the gateway dials the human through the
 * organization's carrier (the fake Calls API and a simulated phone), with the agent's number as caller id (the
 * visitor has none); the browser hears the hold line and hold audio as `response.audio` (PCM16 16 kHz) meanwhile,
 * the human alone the whisper; on keypad 1 tones cross the bridge both ways (the browser's PCM16 8 kHz microphone
 * to the human's mu-law, the human's mu-law to the browser's 16 kHz); a decline and a no-answer bring the visitor
 * back to the agent, which is told and speaks (its own line, or the reason's default line).
 */
import t, { type Test } from 'tap'
import { FakeCallsApi } from '../fakes/carrier/fake-calls-api.js'
import type { FakeCall } from '../fakes/carrier/fake-call.js'
import { decodeMulaw, encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { TRANSFER_FAILED_DEFAULT_LINES } from '../../pipeline/agent/transfer-failed-body.js'
import { eventually, newBackendTenant, sse, startVoiceWorld } from '../carrier-e2e/carrier-setup.js'
import { toneFrames } from '../helpers/tones.js'
import { type BrowserSession, closed, openBrowserSession } from '../helpers/ws-client.js'
import { LayercodeClientModel } from '../fakes/layercode-sdk/layercode-client.js'

const HUMAN = '+14155550100'
const TOKEN = 'warm-transfer-browser-token'

const { c } = await startVoiceWorld(t)
const api = await FakeCallsApi.start({ authToken: TOKEN, stepMs: 5, rewriteUrl: c.rewrite })
t.teardown(() => api.close())
const { tenant, backend } = await newBackendTenant(t, c, TOKEN, (config) => {
  config.clients = { ...(config.clients as object), browser: true }
})
{
  const r = await c.gw.request('PUT', `/admin/v1/organizations/${tenant.orgId}/carrier`, {
    admin: true,
    body: { account_sid: api.accountSid, auth_token: TOKEN, api_base_url: api.baseUrl },
  })
  if (r.status !== 200) throw new Error(r.text)
}

/** The welcome asks for a warm transfer; `transfer.failed` is answered with `failedLine`. */
function script(fields: Record<string, unknown>, failedLine: string): void {
  backend.reply = (req) => {
    const turnId = req.json.turn_id as string
    if (req.json.type === 'session.start') {
      return { kind: 'sse', steps: [{ data: { type: 'response.transfer', turn_id: turnId, mode: 'warm', to: HUMAN, ...fields } }] }
    }
    if (req.json.type === 'transfer.failed') return sse(turnId, failedLine)
    return sse(turnId, 'ok')
  }
}

/** A browser session of the tenant's agent, closed at the end of the test. */
async function visitor(t: Test): Promise<BrowserSession> {
  const auth = await c.gw.request('POST', '/v1/agents/web/authorize_session', { key: tenant.apiKey, body: { agent_id: tenant.agentId } })
  if (auth.status !== 200) throw new Error(auth.text)
  const b = await openBrowserSession(c.gw.url, auth.body.client_session_key, { acknowledgePlayback: true })
  t.teardown(() => b.close())
  return b
}

/** A transfer's turn id (`transfer-1`, `transfer-2`, ...). */
const isTransferTurn = (id: unknown): boolean => typeof id === 'string' && /^transfer-\d+$/.test(id)

/** PCM16 little-endian of every `response.audio` of the transfer's turns from message `from` on (16 kHz). */
function transferAudio(b: BrowserSession, from = 0): Int16Array {
  const parts = b.messages.slice(from).filter((m) => m.type === 'response.audio' && isTransferTurn(m.turn_id))
  const bytes = Buffer.concat(parts.map((m) => Buffer.from(m.content as string, 'base64')))
  return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length >> 1)
}

/** `ms` of a tone as PCM16 8 kHz samples. */
function tonePcm(hz: number, ms: number): Int16Array {
  const n = (8000 * ms) / 1000
  const pcm = new Int16Array(n)
  for (let i = 0; i < n; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / 8000))
  return pcm
}

/** Sends `pcm` (8 kHz) from the browser's microphone in real time, 20 ms a message. */
async function speakFromBrowser(b: BrowserSession, pcm: Int16Array): Promise<void> {
  for (let at = 0; at < pcm.length; at += 160) {
    const frame = pcm.subarray(at, at + 160)
    b.send({ type: 'client.audio', content: Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).toString('base64') })
    await new Promise((r) => setTimeout(r, 20))
  }
}

async function humanLeg(dialled: Promise<FakeCall>) {
  const human = await dialled
  const leg = await eventually(async () => (human.phone?.outcome === 'connected' ? human.phone.call : undefined))
  await leg.waitFor(() => leg.marks.some((m) => m.name.startsWith('whisper') && m.echoedAt !== undefined), 5000)
  return { human, leg }
}

t.test('a browser visitor is handed to a human: hold audio, whisper to the human only, tones both ways', async (t) => {
  api.outcome = { kind: 'answer', realtime: true, silenceWhenIdle: true, playbackSpeed: 4 }
  script({ whisper: 'A visitor about a refund.', hold: 'Please hold.', timeout_s: 20 }, 'unexpected')
  const dialled = api.nextCall()
  const b = await visitor(t)
  const { human, leg } = await humanLeg(dialled)
  t.equal(human.params.to, HUMAN, 'the human is dialled through the carrier')
  t.equal(human.params.from, tenant.number, "the agent's number is the caller id (a visitor has none)")
  t.ok(
    toneFrames(decodeMulaw(leg.receivedAudio(), new Int16Array(leg.receivedAudio().length)), 440, 8000) >= 60,
    'the human heard the whisper',
  )
  // The fake TTS speaks a 440 Hz tone, 20 ms a character: the visitor got the hold line (12 characters), not the whisper.
  const held = transferAudio(b)
  t.ok(
    toneFrames(held, 440, 16000) >= 5 && toneFrames(held, 440, 16000) <= 14,
    `the visitor heard the hold line (${toneFrames(held, 440, 16000)} frames)`,
  )
  t.ok(held.length > 16000 * 0.3, `and hold audio, as PCM16 16 kHz (${(held.length / 16000).toFixed(1)} s)`)

  leg.sendDtmf('1')
  const fromMessage = b.messages.length
  const humanFrom = leg.receivedAudio().length
  const humanTone = leg.sendAudio(Buffer.from(encodeMulaw(tonePcm(1000, 400))))
  void speakFromBrowser(b, tonePcm(440, 400))
  const humanHeard = () => decodeMulaw(leg.receivedAudio().subarray(humanFrom), new Int16Array(leg.receivedAudio().length - humanFrom))
  await leg.waitFor(() => toneFrames(humanHeard(), 440, 8000) >= 10, 5000)
  await humanTone
  await eventually(
    async () => (toneFrames(transferAudio(b, fromMessage), 1000, 16000) >= 10 ? true : undefined),
    5000,
    'the tone at the visitor',
  )
  t.ok(toneFrames(humanHeard(), 440, 8000) >= 10, "the visitor's 440 Hz tone reached the human")
  t.ok(toneFrames(transferAudio(b, fromMessage), 1000, 16000) >= 10, "the human's 1 kHz tone reached the visitor")
  const gone = closed(b.ws)
  leg.hangup()
  await gone
  const row = await eventually(async () => {
    const r = await c.gw.store.db
      .selectFrom('sessions')
      .selectAll()
      .where('agent_id', '=', tenant.agentId)
      .where('channel', '=', 'browser')
      .execute()
    return r.find((s) => s.status === 'ended')
  })
  t.equal(row.end_reason, 'transfer_human_hangup', 'the human hung up: the visitor is let go')
})

t.test('a decline brings the visitor back to the agent, which is told and speaks', async (t) => {
  api.outcome = { kind: 'answer', realtime: true, silenceWhenIdle: true, playbackSpeed: 4 }
  script({ whisper: 'A visitor.', timeout_s: 20 }, 'Nobody is free right now.')
  backend.requests.length = 0
  const dialled = api.nextCall()
  const b = await visitor(t)
  const { leg } = await humanLeg(dialled)
  leg.sendDtmf('2')
  const failed = await eventually(async () => backend.requests.find((r) => r.json.type === 'transfer.failed'))
  t.equal(failed.json.reason, 'declined')
  await b.waitFor((m) => m.type === 'response.text.delta' || (m.type === 'response.audio' && !isTransferTurn(m.turn_id)), 5000)
  t.pass('the agent speaks to the visitor again')
  t.equal(b.ws.readyState, b.ws.OPEN, 'the session goes on')
})

t.test('no answer: the visitor hears the default line and the backend is told no_answer', async (t) => {
  api.outcome = { kind: 'no-answer' }
  backend.reply = (req) => {
    const turnId = req.json.turn_id as string
    if (req.json.type === 'session.start') {
      return { kind: 'sse', steps: [{ data: { type: 'response.transfer', turn_id: turnId, mode: 'warm', to: HUMAN, timeout_s: 20 } }] }
    }
    // The backend's reply to transfer.failed says nothing: the default line is spoken.
    return { kind: 'sse', steps: [{ data: { type: 'response.end', turn_id: turnId } }] }
  }
  backend.requests.length = 0
  const dialled = api.nextCall()
  const b = await visitor(t)
  const human = await dialled
  await human.done
  const failed = await eventually(async () => backend.requests.find((r) => r.json.type === 'transfer.failed'))
  t.equal(failed.json.reason, 'no_answer')
  const line = await b.waitFor((m) => m.type === 'response.text' && m.content === TRANSFER_FAILED_DEFAULT_LINES.no_answer, 5000)
  t.ok(line, 'the default line was said to the visitor')
  t.equal(b.ws.readyState, b.ws.OPEN, 'the session goes on')
})

t.test('bridged, the agent hears nothing of the visitor and the published SDK plays the human on', async (t) => {
  api.outcome = { kind: 'answer', realtime: true, silenceWhenIdle: true, playbackSpeed: 4 }
  script({ accept: 'none', timeout_s: 20, forward_data: true }, 'unexpected')
  backend.requests.length = 0
  const dialled = api.nextCall()
  const auth = await c.gw.request('POST', '/v1/agents/web/authorize_session', { key: tenant.apiKey, body: { agent_id: tenant.agentId } })
  if (auth.status !== 200) throw new Error(auth.text)
  const sdk = new LayercodeClientModel(
    `${c.gw.url.replace(/^http/, 'ws')}/v1/agents/web/websocket?client_session_key=${encodeURIComponent(auth.body.client_session_key)}`,
  )
  t.teardown(() => sdk.close())
  await sdk.opened()
  const human = await dialled
  const leg = await eventually(async () => (human.phone?.outcome === 'connected' ? human.phone.call : undefined))
  // accept "none": bridged on answer. The human talks for 3 s (a 1 kHz tone); the visitor speaks and types meanwhile.
  const humanTone = leg.sendAudio(Buffer.from(encodeMulaw(tonePcm(1000, 3000))))
  await sdk.waitFor((m) => m.type === 'response.audio' && isTransferTurn(m.turn_id))
  await new Promise((r) => setTimeout(r, 500))
  const typedAt = Date.now()
  sdk._wsSend({ type: 'vad_events', event: 'vad_start' })
  await sdk.sendClientResponseText('Can I also ask about my order?')
  sdk._wsSend({ type: 'client.response.data', data: { page: 'checkout' } })
  sdk._wsSend({ type: 'vad_events', event: 'vad_end' })
  await humanTone
  await new Promise((r) => setTimeout(r, 500))

  const types = backend.requests.map((r) => r.json.type)
  t.notOk(types.includes('message'), `no user message reached the agent (${types.join(', ')})`)
  t.ok(types.includes('data'), 'the data event did (forward_data)')
  const received = sdk.received.map((x) => x.m)
  t.notOk(
    received.some((m) => m.type === 'turn.start' && m.role === 'user'),
    'no user turn was announced to the browser',
  )
  t.notOk(
    received.some((m) => (m.type === 'response.audio' || m.type === 'response.text.delta') && !isTransferTurn(m.turn_id)),
    'no assistant turn of the agent was spoken over the bridge',
  )
  // Every transfer turn is announced (role assistant) before its first audio.
  const announced = new Set<string>()
  for (const m of received) {
    if (m.type === 'turn.start' && m.role === 'assistant') announced.add(m.turn_id)
    if (m.type === 'response.audio' && !announced.has(m.turn_id)) t.fail(`audio of ${m.turn_id} before its turn.start`)
  }
  // The SDK stopped its player when the visitor typed; the human's audio went on in the next turn and played.
  const after = sdk.wavPlayer.played.filter((s) => s.startedAt >= typedAt && !s.cut)
  const playedMs = after.reduce((sum, s) => sum + (s.endedAt - s.startedAt), 0)
  t.ok(playedMs >= 1500, `the human kept playing after the visitor typed (${playedMs.toFixed(0)} ms)`)
  const gone = new Promise((r) => sdk.ws.once('close', r))
  leg.hangup()
  await gone
  const starts = received.filter((m) => m.type === 'turn.start' && isTransferTurn(m.turn_id)).map((m) => m.turn_id)
  const last = starts.at(-1)
  t.ok(
    sdk.received.some((x) => x.m.type === 'turn.end' && x.m.turn_id === last),
    `the last transfer turn (${last}) ended before the socket closed`,
  )
})

t.test("without forward_data, the visitor's data and text do not reach the agent during the transfer", async (t) => {
  api.outcome = { kind: 'no-answer' }
  script({ timeout_s: 20 }, 'Nobody answered.')
  backend.requests.length = 0
  const dialled = api.nextCall()
  const b = await visitor(t)
  await dialled
  await eventually(async () => (backend.requests.some((r) => r.json.type === 'session.start') ? true : undefined))
  b.send({ type: 'client.response.data', data: { page: 'checkout' } })
  b.send({ type: 'client.response.text', content: 'hello?' })
  const failed = await eventually(async () => backend.requests.find((r) => r.json.type === 'transfer.failed'))
  const before = backend.requests.slice(0, backend.requests.indexOf(failed)).map((r) => r.json.type)
  t.strictSame(before, ['session.start'], 'nothing of the visitor reached the agent while the human was rung')
})
