/**
 * Session recording end to end over the carrier simulator: a real call (welcome, barge-in, a reply, a keypad
 * digit), then the WAV downloaded and parsed with `wavefile`: the caller's words in the left channel where they
 * were sent, the agent's speech in the right one where the marks said it played, silence after the clear and
 * around the digit, the lifecycle webhook signed; a forced storage failure; a second gateway serving the file.
 */
import t from 'tap'
import wavefile from 'wavefile'
import { performance } from 'node:perf_hooks'
import { verifySignature } from '../fakes/backend/fake-backend.js'
import { startWebhookReceiver } from '../helpers/webhook-receiver.js'
import { callTenant, eventually, newBackendTenant, PUBLIC_URL, sessionOfCall, speech, sse, startVoiceWorld } from './carrier-setup.js'
import { newCallSid } from '../fakes/carrier/phone-simulator.js'
import { decodeMulaw, encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { startTestGateway } from '../helpers/gateway.js'
import { sql } from 'kysely'

const { c, transcripts } = await startVoiceWorld(t)
const receiver = await startWebhookReceiver()
t.teardown(() => receiver.close())

const { tenant, backend } = await newBackendTenant(t, c, 'rec-token', (config) => {
  config.session_webhook = { url: `${receiver.url}/lifecycle` }
})
{
  const org = await c.gw.request('PATCH', `/admin/v1/organizations/${tenant.orgId}`, { admin: true, body: { recording_enabled: true } })
  if (org.status !== 200) throw new Error(org.text)
}

const RATE = 8000
// Long enough to still be playing when the caller's words come: barge-in waits for them (a backchannel does not cut
// the agent off), and the STT fake gives them only when asked to finalize, at the end of speech.
const WELCOME =
  'Welcome to the city library. Let me read you our opening hours for every single day of the week, one by one. ' +
  'We open at nine in the morning and close at eight in the evening on weekdays, and at four on Saturdays.'

/** Wall-clock ms of a performance.now() reading (the simulator's clock). */
const wall = (perf: number) => performance.timeOrigin + perf
const at = (ms: number) => Math.round((ms * RATE) / 1000)

function rms(a: Int16Array, fromMs: number, toMs: number): number {
  const s = a.subarray(Math.max(0, at(fromMs)), Math.max(0, at(toMs)))
  let sum = 0
  for (const x of s) sum += x * x
  return s.length === 0 ? 0 : Math.sqrt(sum / s.length)
}
const silent = (a: Int16Array, fromMs: number, toMs: number) => a.subarray(at(fromMs), at(toMs)).every((x) => x === 0)

/** The lag (ms) in [loMs, hiMs] where `needle` matches `hay` best, and how well (normalised correlation). */
function bestLag(hay: Int16Array, needle: Int16Array, loMs: number, hiMs: number): { lagMs: number; score: number } {
  let best = { lagMs: Number.NaN, score: -1 }
  let nn = 0
  for (const x of needle) nn += x * x
  for (let lag = Math.max(0, at(loMs)); lag <= at(hiMs) && lag + needle.length <= hay.length; lag++) {
    let dot = 0
    let hh = 0
    for (let i = 0; i < needle.length; i++) {
      const h = hay[lag + i] as number
      dot += h * (needle[i] as number)
      hh += h * h
    }
    const score = hh === 0 ? 0 : dot / Math.sqrt(hh * nn)
    if (score > best.score) best = { lagMs: (lag * 1000) / RATE, score }
  }
  return best
}

/** A loud 600 Hz tone, mu-law. */
function tone(ms: number): Buffer {
  const s = new Int16Array(at(ms))
  for (let i = 0; i < s.length; i++) s[i] = Math.round(Math.sin((2 * Math.PI * 600 * i) / RATE) * 12000)
  return Buffer.from(encodeMulaw(s))
}

async function download(base: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${tenant.apiKey}`, ...headers } })
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) }
}

function parse(bytes: Buffer) {
  const wav = new wavefile.WaveFile(bytes)
  const fmt = wav.fmt as { numChannels: number; sampleRate: number; bitsPerSample: number }
  const samples = wav.getSamples(false, Int16Array) as unknown as Int16Array[] | Int16Array
  return { fmt, channels: fmt.numChannels === 1 ? [samples as Int16Array] : (samples as Int16Array[]) }
}

t.test('a recorded phone call: what the caller heard, in two channels, on one timeline', async (t) => {
  const callSid = newCallSid()
  backend.reply = (req) =>
    req.json.type === 'data' ? { kind: 'json', body: {} } : sse(req.json.turn_id, req.json.type === 'session.start' ? WELCOME : 'Sure.')
  transcripts.length = 0
  transcripts.push('stop please')
  const r = await callTenant(c, tenant, { callSid, realtime: true, silenceWhenIdle: true, playbackSpeed: 1 })
  if (r.outcome !== 'connected') throw new Error(`call not connected: ${JSON.stringify(r)}`)
  const call = r.call
  const row = await eventually(async () => sessionOfCall(c, callSid))
  const path = `/v1/agents/${tenant.agentId}/sessions/${row.id}/recording`

  // The welcome plays; the caller talks over it.
  await eventually(
    async () => (call.marks.some((m) => m.echoedAt !== undefined) && call.earpiece.queuedMs() > 500 ? true : undefined),
    10_000,
  )
  const live = await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/${row.id}`, { key: tenant.apiKey })
  t.equal(live.body.recording_status, 'in_progress', 'in progress while the call runs')
  const early = await c.gw.request('GET', path, { key: tenant.apiKey })
  t.equal(early.status, 409, 'no download before the file is finished')
  t.equal(early.body.code, 'recording_in_progress')

  const words = speech('two-phrases.wav', 500)
  await call.sendAudio(words)
  // When the phone said the first word frame (its pacer's schedule: a late timer sends a catch-up burst).
  const wordsSentAt = wall(call.audioStarts.at(-1)?.dueAt ?? 0)
  await eventually(async () => (call.clears.length > 0 ? true : undefined), 20_000)
  await eventually(
    async () => (backend.requests.some((q) => q.json?.session_id === row.id && q.json?.type === 'message') ? true : undefined),
    30_000,
  )
  // The short reply plays to its end.
  await eventually(async () => (call.earpiece.pendingMarks().length === 0 && call.marks.length > 0 ? true : undefined), 20_000)

  // A keypad digit in the middle of a loud tone.
  const beforeTone = call.framesSent
  const toneSent = call.sendAudio(tone(2000))
  await eventually(async () => (call.framesSent >= beforeTone + 50 ? true : undefined), 5_000)
  // The digit follows the tone frames sent so far: on the phone's schedule, it is pressed when the next one was due.
  const toneStart = call.audioStarts.at(-1) as { frame: number; dueAt: number }
  const digitAt = wall(toneStart.dueAt + (call.framesSent - toneStart.frame) * 20)
  call.sendDtmf('7')
  await toneSent
  await call.hangup()

  const ended = await eventually(async () => {
    const s = await sessionOfCall(c, callSid)
    return s?.status === 'ended' ? s : undefined
  }, 30_000)
  const update = await receiver.waitFor((q) => q.json?.type === 'session.update' && q.json.session_id === row.id, 30_000)
  t.ok(verifySignature(tenant.webhookSecret, update.raw, update.headers['service-signature'] as string), 'session.update is signed')
  const url = `${PUBLIC_URL}${path}`
  t.match(update.json, {
    recording_status: 'completed',
    recording_url: url,
    metadata: {},
    from_phone_number: '+442071838750',
    to_phone_number: tenant.number,
  })
  t.ok(
    Math.abs(update.json.recording_duration * 1000 - (ended.duration_ms ?? 0)) < 1,
    'recording_duration is the session duration in seconds',
  )
  const end = receiver.requests.find((q) => q.json?.type === 'session.end' && q.json.session_id === row.id)
  t.equal(end?.json.recording_status, 'enabled', 'session.end still reports the organization setting')
  const details = await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/${row.id}`, { key: tenant.apiKey })
  t.match(details.body, { recording_status: 'completed', recording_url: url })

  const got = await download(c.gw.url, path)
  t.equal(got.status, 200)
  t.equal(got.headers.get('content-type'), 'audio/wav')
  t.equal(got.headers.get('accept-ranges'), 'bytes')
  t.equal(Number(got.headers.get('content-length')), got.bytes.length)
  const { fmt, channels } = parse(got.bytes)
  t.match(fmt, { numChannels: 2, sampleRate: 8000, bitsPerSample: 16 })
  const [left, right] = channels as [Int16Array, Int16Array]
  const startedAt = ended.started_at?.getTime() ?? 0
  const durationMs = ((ended.ended_at?.getTime() ?? 0) - startedAt) as number
  t.ok(Math.abs((left.length * 1000) / RATE - durationMs) <= 100, `WAV ${(left.length * 1000) / RATE} ms vs session ${durationMs} ms`)

  // The caller's words sit in the left channel where they were sent.
  const needle = decodeMulaw(words.subarray(0, 8000))
  const expected = wordsSentAt - startedAt
  const found = bestLag(left, needle, expected - 400, expected + 400)
  t.ok(found.score > 0.9, `the caller's words are in the left channel (correlation ${found.score.toFixed(3)})`)
  t.ok(Math.abs(found.lagMs - expected) <= 40, `at ${found.lagMs} ms, sent at ${expected} ms`, { starts: call.audioStarts })

  // The agent's speech ended where each mark came back (the fake TTS speaks a tone; chunks are 100 ms).
  const played = call.marks.filter((m) => m.echoedAt !== undefined && !m.cleared)
  t.ok(played.length > 3, 'several marks were echoed')
  for (const m of played) {
    // Within 40 ms of where the echo says the chunk ended (the gateway reads the echo a little after it left).
    const p = wall(m.echoedAt as number) - startedAt
    if (Math.max(rms(right, p - 100, p - 60), rms(right, p - 60, p - 20), rms(right, p - 20, p + 20)) < 1000) {
      t.fail(`no agent audio before mark ${m.name} at ${p} ms`)
    }
  }
  t.pass('agent audio before every echoed mark')
  // The last reply ended where its last mark came back: silence after it.
  const lastEcho = wall(played.at(-1)?.echoedAt as number) - startedAt
  t.ok(silent(right, lastEcho + 40, lastEcho + 400), 'silent after the last chunk was heard')
  t.ok(rms(left, 0, 300) < 200, 'the caller channel holds no agent audio (no echo of the right channel)')

  // After the barge-in the agent channel goes silent at the clear.
  const clearMs = wall(call.clears[0]!.at) - startedAt
  t.ok(rms(right, clearMs - 200, clearMs - 40) > 1000, 'the welcome was playing before the clear')
  t.ok(silent(right, clearMs + 40, clearMs + 400), 'silent from the clear on')

  // The digit's span is silent on the caller channel; the tone around it is not.
  const d = digitAt - startedAt
  t.ok(silent(left, d - 200, d + 200), 'silence around the keypad digit')
  t.ok(rms(left, d - 600, d - 300) > 3000, 'the tone before the mask')
  t.ok(rms(left, d + 300, d + 600) > 3000, 'the tone after the mask')

  // Byte ranges, mono, another gateway on the same database, another organization, deletion.
  const part = await download(c.gw.url, path, { range: 'bytes=100-1099' })
  t.equal(part.status, 206)
  t.equal(part.headers.get('content-range'), `bytes 100-1099/${got.bytes.length}`)
  t.same(part.bytes, got.bytes.subarray(100, 1100))
  const bad = await download(c.gw.url, path, { range: `bytes=${got.bytes.length}-` })
  t.equal(bad.status, 416)
  t.equal(bad.headers.get('content-range'), `bytes */${got.bytes.length}`)
  const mono = parse((await download(c.gw.url, `${path}?channels=mono`)).bytes)
  t.match(mono.fmt, { numChannels: 1, sampleRate: 8000 })
  t.equal(mono.channels[0]?.length, left.length)

  const other = await startTestGateway({ PUBLIC_URL }, { db: c.gw.db })
  t.teardown(() => other.close())
  const res = await fetch(`${other.url}${path}`, { headers: { authorization: `Bearer ${tenant.apiKey}` } })
  t.same(Buffer.from(await res.arrayBuffer()), got.bytes, 'the other gateway serves the same file')

  const stranger = await c.gw.request('GET', path, { key: c.gw.apiKey })
  const missing = await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/sess_missing/recording`, { key: tenant.apiKey })
  t.equal(stranger.status, 404)
  t.same(stranger.body, missing.body, "another organization's recording looks missing")
  t.match(missing.body, { error: String, code: 'recording_not_found' })

  t.equal((await c.gw.request('DELETE', path, { key: tenant.apiKey })).status, 204)
  t.equal((await c.gw.request('GET', path, { key: tenant.apiKey })).status, 404)
  const after = await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/${row.id}`, { key: tenant.apiKey })
  t.equal(after.body.recording_status, 'not_available')
})

t.test('a failing store fails the recording; the call goes on', async (t) => {
  const callSid = newCallSid()
  // A real storage failure: the database refuses this call's audio.
  await sql
    .raw(`create or replace function refuse_chunks() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from sessions where id = new.session_id and call_sid = '${callSid}') then
          raise exception 'disk full';
        end if;
        return new;
      end $$`)
    .execute(c.gw.store.db)
  await sql
    .raw('create trigger refuse_chunks before insert on recording_chunks for each row execute function refuse_chunks()')
    .execute(c.gw.store.db)
  t.teardown(() => sql.raw('drop trigger if exists refuse_chunks on recording_chunks').execute(c.gw.store.db))
  backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello there.' : 'Sure.')
  transcripts.length = 0
  transcripts.push('hello')
  const r = await callTenant(c, tenant, { callSid, realtime: true, silenceWhenIdle: true, playbackSpeed: 1 })
  if (r.outcome !== 'connected') throw new Error(`call not connected: ${JSON.stringify(r)}`)
  const call = r.call
  const row = await eventually(async () => sessionOfCall(c, callSid))
  await call.sendAudio(speech('two-phrases.wav'))
  await eventually(
    async () => (backend.requests.some((q) => q.json?.session_id === row.id && q.json?.type === 'message') ? true : undefined),
    30_000,
  )
  await eventually(async () => (call.earpiece.pendingMarks().length === 0 && call.marks.length > 1 ? true : undefined), 20_000)
  t.ok(call.playedAudio().length > 0, 'the caller heard the agent')
  await call.hangup()
  const update = await receiver.waitFor((q) => q.json?.type === 'session.update' && q.json.session_id === row.id, 30_000)
  t.ok(verifySignature(tenant.webhookSecret, update.raw, update.headers['service-signature'] as string), 'signed')
  t.match(update.json, { recording_status: 'failed', error_message: /disk full/, metadata: {} })
  t.notOk('recording_url' in update.json)
  const ended = await sessionOfCall(c, callSid)
  t.equal(ended?.end_reason, 'caller_hangup', 'the call ended as calls do')
  const details = await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/${row.id}`, { key: tenant.apiKey })
  t.equal(details.body.recording_status, 'not_available')
  t.ok(
    details.body.transcript.some((x: { user_message: string | null }) => x.user_message === 'hello'),
    'the conversation happened',
  )
  t.equal((await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/${row.id}/recording`, { key: tenant.apiKey })).status, 404)
})
