/**
 * Self-hosted speech on phone calls, over the carrier simulator, a real gateway and its database: a gateway with no
 * cloud speech key but `STT_OPENAI_COMPATIBLE_URL` and `TTS_OPENAI_COMPATIBLE_URL` pointing at a local OpenAI-format
 * speech server (the fake speaks the published wire formats). The caller's espeak-ng speech reaches the server as a
 * WAV segment (or over the Realtime socket), the text it returns is the turn the backend gets, the reply is spoken by
 * the server's `/audio/speech`, and the recording is silenced over a card number where `verbose_json` timed it.
 */
import t from 'tap'
import wavefile from 'wavefile'
import { startFakeOpenAiSpeech, VOICED_LEVEL } from '../fakes/openai-speech/fake-openai-speech.js'
import {
  eventually,
  heardAll,
  newBackendTenant,
  sessionOfCall,
  speech,
  sse,
  startCarrierGateway,
  startRealtimeCall,
  CARD_DIGITS,
} from './carrier-setup.js'

const fake = await startFakeOpenAiSpeech({ msPerChar: 20, chunkMs: 100, chunkIntervalMs: 0 })
t.teardown(() => fake.close())
const c = await startCarrierGateway({ STT_OPENAI_COMPATIBLE_URL: fake.baseUrl, TTS_OPENAI_COMPATIBLE_URL: fake.baseUrl })
t.teardown(() => c.gw.close())

const CARD = 'my card is 4111 1111 1111 1111 thanks'

/** A tenant whose agent was created on this gateway (so its speech steps were chosen for it), recording on. */
async function tenantWith(token: string, stt: Record<string, unknown> = {}) {
  let chosen: string[] = []
  const made = await newBackendTenant(t, c, token, (config) => {
    chosen = config.plugins.map((p: { use: string }) => p.use)
    config.plugins = config.plugins.map((p: { use: string; options: object }) =>
      p.use === 'stt.openai_compatible' ? { use: p.use, options: { ...p.options, ...stt } } : p,
    )
  })
  const org = await c.gw.request('PATCH', `/admin/v1/organizations/${made.tenant.orgId}`, {
    admin: true,
    body: { recording_enabled: true },
  })
  if (org.status !== 200) throw new Error(org.text)
  return { ...made, chosen }
}

/** Whether the segment the server got holds speech (the fixture), not the phone's silence. */
const voiced = (samples: Int16Array) => samples.some((x) => Math.abs(x) > VOICED_LEVEL)

t.test('segments: the caller is transcribed by the server of our own, answered, spoken by it, and the card silenced', async (t) => {
  const { tenant, backend, chosen } = await tenantWith('self-hosted-segments', { model: 'Systran/faster-whisper-small', language: 'en' })
  t.strictSame(
    chosen.filter((u) => u.startsWith('stt.') || u.startsWith('tts.')),
    ['stt.openai_compatible', 'tts.openai_compatible'],
    'an agent created here uses the servers of our own',
  )
  fake.transcribe = (r) => ({ text: voiced(r.wav.samples) ? CARD : '' })
  backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello.' : 'Thank you.')
  const speechBefore = fake.speech.length
  const { call, callSid, row } = await startRealtimeCall(c, tenant)
  await heardAll(call)
  t.equal(fake.speech[speechBefore]?.json.input, 'Hello.', 'the welcome was spoken by the speech server')
  const marks = call.marks.length
  const sttBefore = fake.transcriptions.length
  await call.sendAudio(speech('phrase.wav', 1500))
  const message = await eventually(
    async () => backend.requests.find((q) => q.json?.session_id === row.id && q.json?.type === 'message'),
    30_000,
  )
  t.equal(message.json.text, CARD, "the server's text is the turn the backend got")
  const segment = fake.transcriptions.slice(sttBefore).find((r) => voiced(r.wav.samples))!
  t.ok(segment, "the caller's speech reached the server")
  t.match(segment.fields, { model: 'Systran/faster-whisper-small', language: 'en', response_format: 'verbose_json' })
  t.equal(segment.wav.sampleRate, 16000)
  await heardAll(call, marks + 1)
  t.ok(
    fake.speech.some((s) => s.json.input === 'Thank you.'),
    'the reply was spoken by the speech server',
  )

  await call.hangup()
  await eventually(async () => ((await sessionOfCall(c, callSid))?.status === 'ended' ? true : undefined), 30_000)
  const base = `/v1/agents/${tenant.agentId}/sessions/${row.id}/recording`
  const meta = await eventually(async () => {
    const m = await c.gw.request('GET', `${base}/metadata`, { key: tenant.apiKey })
    return m.status === 200 && m.body.status === 'completed' ? m.body : undefined
  }, 30_000)
  t.equal(meta.silenced.length, 1, 'one silenced span')
  t.equal(meta.silenced[0]?.kind, 'card')
  const res = await fetch(`${c.gw.url}${base}`, { headers: { authorization: `Bearer ${tenant.apiKey}` } })
  const wav = new wavefile.WaveFile(Buffer.from(await res.arrayBuffer()))
  const [caller] = wav.getSamples(false, Int16Array) as unknown as [Int16Array]
  const from = Math.round((meta.silenced[0].from_ms * 8000) / 1000)
  const to = Math.round((meta.silenced[0].to_ms * 8000) / 1000)
  // The fake placed the 8 words evenly over the voiced part of the segment; words 4 to 7 are the card's.
  let first = -1
  let last = -1
  caller.forEach((x, i) => {
    if (Math.abs(x) <= VOICED_LEVEL) return
    if (first < 0) first = i
    last = i
  })
  const slot = (last + 1 - first) / 8
  const tolerance = (40 * 8000) / 1000
  t.ok(
    Math.abs(from - (first + 3 * slot)) <= tolerance && Math.abs(to - (first + 7 * slot)) <= tolerance,
    `silenced where verbose_json timed the card, within 40 ms: ${from}-${to}, words ${Math.round(first + 3 * slot)}-${Math.round(first + 7 * slot)}`,
  )
  t.ok(
    caller.subarray(from + 8, to - 8).every((x) => x === 0),
    'the caller channel is silent over them',
  )
  t.ok(
    caller.subarray(first, from - tolerance).some((x) => Math.abs(x) > VOICED_LEVEL),
    'the words before the card are heard',
  )
  const details = await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/${row.id}`, { key: tenant.apiKey })
  t.notMatch(JSON.stringify(details.body), CARD_DIGITS, 'no digit of it in the session details')
})

t.test('realtime: the caller is transcribed over the Realtime socket, mu-law as the phone sent it', async (t) => {
  const { tenant, backend } = await tenantWith('self-hosted-realtime', { mode: 'realtime', model: 'gpt-4o-transcribe' })
  fake.realtimeText = (audio) => (audio.some((b) => b < 0x30 || (b >= 0x80 && b < 0xb0)) ? 'what are your opening hours' : '')
  backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hi.' : 'We open at nine.')
  const before = fake.realtime.length
  const { call, row } = await startRealtimeCall(c, tenant)
  await heardAll(call)
  const marks = call.marks.length
  await call.sendAudio(speech('phrase.wav', 1500))
  const message = await eventually(
    async () => backend.requests.find((q) => q.json?.session_id === row.id && q.json?.type === 'message'),
    30_000,
  )
  t.equal(message.json.text, 'what are your opening hours')
  const rt = fake.realtime[before]!
  t.match(rt.events[0], {
    type: 'session.update',
    session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcmu' }, turn_detection: null } } },
  })
  t.ok(rt.turns[0]!.length > 8000, `a second and more of the caller's audio went over the socket: ${rt.turns[0]!.length} bytes`)
  await heardAll(call, marks + 1)
  t.ok(
    fake.speech.some((s) => s.json.input === 'We open at nine.'),
    'the reply was spoken by the speech server',
  )
  await call.hangup()
})

t.test('a recognizer that fails the turn (5xx, or no answer in time) is not silence: the caller hears the fallback', async (t) => {
  const { tenant, backend } = await tenantWith('self-hosted-failing', { timeout_ms: 1000 })
  backend.reply = (req) => sse(req.json.turn_id, 'Hello.')
  for (const [failure, detail] of [
    [{ status: 503 }, 'vendor_server_error 503'],
    [{ hang: true }, 'vendor_timeout'],
  ] as const) {
    fake.transcribe = (r) => (voiced(r.wav.samples) ? failure : { text: '' })
    const speechBefore = fake.speech.length
    const { call, row } = await startRealtimeCall(c, tenant)
    await heardAll(call)
    const marks = call.marks.length
    await call.sendAudio(speech('phrase.wav', 1500))
    const fallback = await eventually(
      async () => fake.speech.slice(speechBefore).find((s) => String(s.json.input).startsWith("I'm sorry")),
      15_000,
    )
    t.match(fallback.json.input, /I'm sorry, I'm having trouble/, `${JSON.stringify(failure)}: the fallback was spoken`)
    await heardAll(call, marks + 1)
    t.notOk(
      backend.requests.some((q) => q.json?.session_id === row.id && q.json?.type === 'message'),
      'no turn reached the backend',
    )
    await call.hangup()
    await eventually(async () => ((await sessionOfCall(c, row.call_sid!))?.status === 'ended' ? true : undefined), 30_000)
    const details = await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/${row.id}`, { key: tenant.apiKey })
    const failed = details.body.transcript.find((e: { failure: unknown }) => e.failure !== null)
    t.match(
      failed?.failure,
      { cause: 'stt_failed', detail, heard: /I'm sorry, I'm having trouble/ },
      'stored as a failed turn with its cause',
    )
  }
})
