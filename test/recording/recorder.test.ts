/**
 * The recorder against a real database: placement on the timeline, silence, DTMF masks, barge-in cuts, the agent
 * placement by marks and by estimate, storage failures; the WAV is read back with `wavefile`, not our writer.
 */
import t from 'tap'
import { sql } from 'kysely'
import wavefile from 'wavefile'
import { authorizedSessionRow, startTestGateway } from '../helpers/gateway.js'
import { silentLogger } from '../../core/log.js'
import { decodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { ChunkRecorder } from '../../gateway/recording/recorder.js'
import type { RecordingSink } from '../../gateway/recording/recording-port.js'
import { databaseSink } from '../../gateway/recording/database-sink.js'
import { EstimatedPlayout, MarkedPlayout } from '../../gateway/recording/agent-playout.js'
import { wavBytes, wavSize } from '../../gateway/recording/wav-stream.js'
import { findRecording } from '../../gateway/store/recordings.js'
import { isDatabaseUnavailable } from '../../gateway/store/database-errors.js'

const gw = await startTestGateway()
t.teardown(() => gw.close())
const db = gw.store.db
const agent = (await gw.request('POST', '/v1/agents', { body: {} })).body

/** A fresh authorized session row to hang a recording on. */
const sessionRow = () => authorizedSessionRow(gw, agent.id)

function recorder(sink: RecordingSink, rate = 8000, opts: { maxQueuedBytes?: number; mulaw?: boolean } = {}) {
  const r = new ChunkRecorder({ sink, sampleRate: rate, log: silentLogger(), flushIntervalMs: 50, ...opts })
  r.start()
  return r
}

/** Reads the stored recording back through the WAV stream and parses it with wavefile. */
async function readWav(sessionId: string, channels: 1 | 2 = 2, range?: [number, number]) {
  const rec = await findRecording(db, gw.orgId, agent.id, sessionId)
  if (rec === undefined || rec.totalSamples === null) throw new Error('no completed recording')
  const file = { sessionId, sampleRate: rec.sampleRate, totalSamples: rec.totalSamples, channels }
  const size = wavSize(file)
  const parts: Buffer[] = []
  for await (const b of wavBytes(db, file, range?.[0] ?? 0, range?.[1] ?? size - 1)) parts.push(b)
  const bytes = Buffer.concat(parts)
  if (range !== undefined) return { bytes, wav: undefined, channels: [] as Int16Array[] }
  const wav = new wavefile.WaveFile(bytes)
  const fmt = wav.fmt as { numChannels: number; sampleRate: number; bitsPerSample: number }
  const samples = wav.getSamples(false, Int16Array) as unknown as Int16Array[] | Int16Array
  const chans = fmt.numChannels === 1 ? [samples as Int16Array] : (samples as Int16Array[])
  return { bytes, wav: fmt, channels: chans }
}

const tone = (n: number, v: number) => new Int16Array(n).fill(v)
const allEqual = (a: Int16Array, from: number, to: number, v: number) => a.subarray(from, to).every((x) => x === v)

t.test('caller and agent land on their channels at their times; silence elsewhere; length is the duration', async (t) => {
  const row = await sessionRow()
  const r = recorder(databaseSink(db, row, 8000, 'u'))
  // 20 ms frames arriving from 100 ms: each frame's audio was spoken in the 20 ms before it arrived.
  for (let i = 0; i < 10; i++) r.caller(tone(160, 1000), 120 + i * 20)
  r.agent(tone(800, -2000), 500)
  // A pause of a second, then more caller audio: a gap of silence, not a continuation.
  r.caller(tone(160, 3000), 1520)
  const out = await r.finish(2000)
  t.same(out, { status: 'completed', durationMs: 2000 })
  const { wav, channels } = await readWav(row.id)
  t.match(wav, { numChannels: 2, sampleRate: 8000, bitsPerSample: 16 })
  const [left, right] = channels as [Int16Array, Int16Array]
  t.equal(left.length, 16000, 'two seconds at 8 kHz')
  t.ok(allEqual(left, 0, 800, 0), 'silence before the caller spoke')
  t.ok(allEqual(left, 800, 2400, 1000), 'caller audio from 100 ms to 300 ms')
  t.ok(allEqual(left, 2400, 12000, 0), 'silence while nobody spoke')
  t.ok(allEqual(left, 12000, 12160, 3000), 'caller audio after the gap at its arrival time')
  t.ok(allEqual(right, 0, 4000, 0) && allEqual(right, 4000, 4800, -2000) && allEqual(right, 4800, 16000, 0), 'agent audio at 500 ms')
  const row2 = await db
    .selectFrom('sessions')
    .select(['recording_status', 'recording_url'])
    .where('id', '=', row.id)
    .executeTakeFirstOrThrow()
  t.same(row2, { recording_status: 'completed', recording_url: 'u' })
})

t.test('a DTMF mask silences the caller before and after the digit, including audio already written', async (t) => {
  const row = await sessionRow()
  const r = recorder(databaseSink(db, row, 8000, 'u'))
  for (let i = 1; i <= 50; i++) r.caller(tone(160, 500), i * 20)
  // Let the flush timer write what came so far, so the mask has to overwrite stored audio too.
  await new Promise((res) => setTimeout(res, 120))
  r.maskCaller(750, 1250)
  for (let i = 51; i <= 100; i++) r.caller(tone(160, 500), i * 20)
  await r.finish(2000)
  const [left] = (await readWav(row.id)).channels as [Int16Array]
  t.ok(allEqual(left, 0, 6000, 500), 'audio before the mask')
  t.ok(allEqual(left, 6000, 10000, 0), '750 ms to 1250 ms silenced')
  t.ok(allEqual(left, 10000, 16000, 500), 'audio after the mask')
})

t.test('a clear cuts the agent channel at the clear, even where future audio was written', async (t) => {
  const row = await sessionRow()
  const r = recorder(databaseSink(db, row, 8000, 'u'))
  const playout = new EstimatedPlayout(r, 8000)
  // A whole second sent at once at 100 ms plays until 1100 ms; the caller barges in at 600 ms.
  playout.sent(1, tone(8000, 1234), 100)
  await new Promise((res) => setTimeout(res, 120))
  playout.cleared(600)
  playout.sent(2, tone(800, 77), 1500)
  await r.finish(2000)
  const [, right] = (await readWav(row.id)).channels as [Int16Array, Int16Array]
  t.ok(allEqual(right, 800, 4800, 1234), 'played from 100 ms to the clear')
  t.ok(allEqual(right, 4800, 12000, 0), 'silent from the clear on')
  t.ok(allEqual(right, 12000, 12800, 77), 'the next reply at its time')
})

t.test('with marks, agent audio ends where its mark came back; unconfirmed audio is cut at the clear', async (t) => {
  const row = await sessionRow()
  const r = recorder(databaseSink(db, row, 8000, 'u'))
  const playout = new MarkedPlayout(r, 8000)
  // Sent at 0 ms (faster than real time), heard 200-400 ms and 400-600 ms per the marks.
  playout.sent(1, tone(1600, 11), 0)
  playout.sent(2, tone(1600, 22), 0)
  playout.sent(3, tone(1600, 33), 0)
  playout.played(1, 400)
  playout.played(2, 600)
  // Chunk 3 plays from 600 ms; the clear at 700 ms stops it.
  playout.cleared(700)
  await r.finish(1000)
  const [, right] = (await readWav(row.id)).channels as [Int16Array, Int16Array]
  t.ok(allEqual(right, 0, 1600, 0), 'nothing before playback began')
  t.ok(allEqual(right, 1600, 3200, 11) && allEqual(right, 3200, 4800, 22), 'chunks where their marks said')
  t.ok(allEqual(right, 4800, 5600, 33), 'the unconfirmed chunk until the clear')
  t.ok(allEqual(right, 5600, 8000, 0), 'silent after the clear')
})

t.test('marked playout: a clear after a pause cuts the agent channel at the pause', async (t) => {
  const row = await sessionRow()
  const r = recorder(databaseSink(db, row, 8000, 'u'))
  const playout = new MarkedPlayout(r, 8000)
  playout.sent(1, tone(1600, 11), 0)
  playout.sent(2, tone(1600, 22), 0)
  playout.played(1, 400)
  // Chunk 2 plays from 400 ms; paused at 500 ms, then the caller's words interrupt it at 800 ms.
  playout.paused(500)
  playout.cleared(800)
  await r.finish(1000)
  const [, right] = (await readWav(row.id)).channels as [Int16Array, Int16Array]
  t.ok(allEqual(right, 1600, 3200, 11), 'the heard chunk where its mark said')
  t.ok(allEqual(right, 3200, 4000, 22), 'the chunk playing until the pause')
  t.ok(allEqual(right, 4000, 8000, 0), 'silent from the pause on, not from the clear')
})

t.test('mono mixdown and byte ranges of the file', async (t) => {
  const row = await sessionRow()
  const r = recorder(databaseSink(db, row, 16000, 'u'), 16000)
  r.caller(tone(1600, 100), 200)
  r.agent(tone(1600, 50), 100)
  await r.finish(500)
  const mono = await readWav(row.id, 1)
  t.match(mono.wav, { numChannels: 1, sampleRate: 16000 })
  const m = mono.channels[0] as Int16Array
  t.equal(m.length, 8000)
  t.ok(allEqual(m, 1600, 3200, 150), 'both channels summed')
  const whole = (await readWav(row.id)).bytes
  const part = (await readWav(row.id, 2, [40, 4099])).bytes
  t.same(part, whole.subarray(40, 4100), 'a range is the same bytes as the whole file has there')
})

t.test('what is stored before completing is there when the recording is completed; not run when it fails', async (t) => {
  const row = await sessionRow()
  const base = databaseSink(db, row, 8000, 'u')
  const order: string[] = []
  const sink: RecordingSink = {
    ...base,
    complete: async (samples) => {
      order.push('complete')
      return base.complete(samples)
    },
  }
  const r = recorder(sink)
  for (let i = 1; i <= 5; i++) r.caller(tone(160, 9), i * 20)
  const out = await r.finish(200, async () => {
    const rec = await db.selectFrom('recordings').select('status').where('session_id', '=', row.id).executeTakeFirst()
    order.push(`before complete: the row is ${rec?.status}`)
  })
  t.same(out, { status: 'completed', durationMs: 200 })
  t.same(order, ['before complete: the row is in_progress', 'complete'])
  const failing = recorder({
    ...databaseSink(db, await sessionRow(), 8000, 'u'),
    append: async () => Promise.reject(new Error('disk full')),
  })
  failing.caller(tone(160, 9), 20)
  let ran = false
  const markRan = async () => {
    ran = true
  }
  t.match(await failing.finish(200, markRan), { status: 'failed' })
  t.notOk(ran, 'a failed recording completes nothing')
})

t.test('a failing store fails the recording, not the caller of the recorder', async (t) => {
  const row = await sessionRow()
  const base = databaseSink(db, row, 8000, 'u')
  const sink: RecordingSink = { ...base, append: async () => Promise.reject(new Error('disk full')) }
  const r = recorder(sink)
  for (let i = 1; i <= 20; i++) r.caller(tone(160, 9), i * 20)
  const out = await r.finish(1000)
  t.match(out, { status: 'failed', error: /disk full/ })
  t.equal((await findRecording(db, gw.orgId, agent.id, row.id))?.status, 'failed')
  const s = await db.selectFrom('sessions').select('recording_status').where('id', '=', row.id).executeTakeFirstOrThrow()
  t.equal(s.recording_status, 'not_available')
})

t.test('a store that is away for a moment (database restart) loses nothing: batches are written again', async (t) => {
  const row = await sessionRow()
  const base = databaseSink(db, row, 8000, 'u')
  let failures = 0
  // The first two batches fail the way a restarting server does (and the second had in fact been written:
  // its answer was lost), then the store is back.
  const sink: RecordingSink = {
    ...base,
    append: async (chunks) => {
      if (failures === 1) await base.append(chunks)
      if (failures++ < 2) throw Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })
      await base.append(chunks)
    },
  }
  const r = new ChunkRecorder({ sink, sampleRate: 8000, log: silentLogger(), flushIntervalMs: 50, isTransient: isDatabaseUnavailable })
  r.start()
  for (let i = 1; i <= 50; i++) r.caller(tone(160, 9), i * 20)
  const out = await r.finish(1000)
  t.match(out, { status: 'completed' })
  t.ok(failures > 2, 'the store failed twice, then took the audio')
  const wav = await readWav(row.id)
  t.ok(allEqual(wav.channels[0] as Int16Array, 160, 8000, 9), 'the caller audio of the whole second is there')
})

t.test('a store that stays away fails the recording once its retry time is spent', async (t) => {
  const row = await sessionRow()
  const base = databaseSink(db, row, 8000, 'u')
  const sink: RecordingSink = {
    ...base,
    append: async () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
  }
  const r = new ChunkRecorder({
    sink,
    sampleRate: 8000,
    log: silentLogger(),
    flushIntervalMs: 50,
    isTransient: isDatabaseUnavailable,
    retryForMs: 300,
  })
  r.start()
  for (let i = 1; i <= 20; i++) r.caller(tone(160, 9), i * 20)
  t.match(await r.finish(1000), { status: 'failed', error: /ECONNREFUSED/ })
})

t.test('a store that falls behind fails the recording instead of growing memory', async (t) => {
  const row = await sessionRow()
  const base = databaseSink(db, row, 8000, 'u')
  let release!: () => void
  const stuck = new Promise<void>((res) => (release = res))
  const sink: RecordingSink = { ...base, append: () => stuck }
  const r = recorder(sink, 8000, { maxQueuedBytes: 64 * 1024 })
  // 10 s of audio while the store answers nothing: more than 64 KiB waits.
  for (let i = 1; i <= 500; i++) r.caller(tone(160, 9), i * 20)
  t.ok(r.failed, 'failed as soon as the bound was passed')
  release()
  t.match(await r.finish(10_000), { status: 'failed', error: /fell behind/ })
})

t.test('retention deletes finished recordings older than the limit, and only those', async (t) => {
  const old = await sessionRow()
  const fresh = await sessionRow()
  for (const row of [old, fresh]) {
    const r = recorder(databaseSink(db, row, 8000, 'u'))
    r.caller(tone(160, 5), 20)
    await r.finish(100)
  }
  const live = await sessionRow()
  recorder(databaseSink(db, live, 8000, 'u'))
  while ((await findRecording(db, gw.orgId, agent.id, live.id)) === undefined) await new Promise((res) => setTimeout(res, 10))
  await sql`update recordings set created_at = now() - interval '40 days' where session_id in (${old.id}, ${live.id})`.execute(db)
  const { RecordingRetention } = await import('../../gateway/recording/retention.js')
  const deleted = await new RecordingRetention(db, silentLogger(), 30).sweep()
  t.equal(deleted, 1, 'the old finished one; one still in progress stays')
  t.equal(await findRecording(db, gw.orgId, agent.id, old.id), undefined)
  t.equal((await findRecording(db, gw.orgId, agent.id, fresh.id))?.status, 'completed')
  t.equal((await findRecording(db, gw.orgId, agent.id, live.id))?.status, 'in_progress')
  const s = await db.selectFrom('sessions').select(['recording_status', 'recording_url']).where('id', '=', old.id).executeTakeFirstOrThrow()
  t.same(s, { recording_status: 'not_available', recording_url: null })
  const chunks = await db.selectFrom('recording_chunks').select('seq').where('session_id', '=', old.id).execute()
  t.equal(chunks.length, 0, 'its audio is gone too')
})

t.test('a recording left in progress by a dead process fails when the sweeper ends its session', async (t) => {
  const { startWebhookReceiver } = await import('../helpers/webhook-receiver.js')
  const { sendDetachedSessionEnd, ORPHANED_RECORDING_ERROR } = await import('../../gateway/sessions/detached-session-end.js')
  const receiver = await startWebhookReceiver()
  t.teardown(() => receiver.close())
  const a = (await gw.request('POST', '/v1/agents', { body: {} })).body
  const saved = await gw.request('POST', `/v1/agents/${a.id}`, {
    body: { config: { ...a.config, session_webhook: { url: `${receiver.url}/hook` } } },
  })
  t.equal(saved.status, 200, saved.text)
  const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: a.id } })
  const row = await db.selectFrom('sessions').selectAll().where('conversation_id', '=', auth.body.conversation_id).executeTakeFirstOrThrow()
  recorder(databaseSink(db, row, 8000, 'u')).caller(tone(160, 5), 20)
  while ((await findRecording(db, gw.orgId, a.id, row.id)) === undefined) await new Promise((res) => setTimeout(res, 10))
  await sendDetachedSessionEnd({ db, log: silentLogger(), webhookPolicy: { allowInsecureLoopback: true } }, row)
  t.equal((await findRecording(db, gw.orgId, a.id, row.id))?.status, 'failed')
  const update = await receiver.waitFor((q) => q.json?.type === 'session.update' && q.json.session_id === row.id)
  t.match(update.json, { recording_status: 'failed', error_message: ORPHANED_RECORDING_ERROR, metadata: {} })
  t.ok(
    receiver.requests.some((q) => q.json?.type === 'session.end' && q.json.session_id === row.id),
    'session.end too',
  )
})

t.test('caller audio found to be placed late moves back, whole and in order', async (t) => {
  const row = await sessionRow()
  const r = recorder(databaseSink(db, row, 8000, 'u'))
  // Three 20 ms frames read together at 300 ms: each says it ended at 300 ms (the session lowers its zero).
  r.caller(tone(160, 1), 300)
  r.caller(tone(160, 2), 300)
  r.caller(tone(160, 3), 300)
  await r.finish(1000)
  const [left] = (await readWav(row.id)).channels as [Int16Array]
  t.ok(allEqual(left, 0, 1920, 0), 'nothing before')
  t.ok(allEqual(left, 1920, 2080, 1) && allEqual(left, 2080, 2240, 2) && allEqual(left, 2240, 2400, 3), 'in order, ending at 300 ms')
  t.ok(allEqual(left, 2400, 8000, 0), 'nothing after')
})

t.test('caller audio that moves back into a paused stretch is silent there', async (t) => {
  const row = await sessionRow()
  const r = recorder(databaseSink(db, row, 8000, 'u'))
  // The backend paused the recording over [200, 300) ms (samples 1600-2400).
  r.pause(200)
  r.resume(300)
  // A frame read at 400 ms goes at [380, 400) ms; the next says it ended at 330 ms: the first was placed 90 ms late
  // and moves back to [290, 310) ms, across the resume; the second follows it at [310, 330) ms.
  r.caller(tone(160, 5), 400)
  r.caller(tone(160, 6), 330)
  await r.finish(1000)
  const [left] = (await readWav(row.id)).channels as [Int16Array]
  t.ok(allEqual(left, 1600, 2400, 0), 'silent over the pause, wherever the audio moved')
  t.ok(allEqual(left, 2400, 2480, 5) && allEqual(left, 2480, 2640, 6), 'what fell after the resume kept, in order')
})

t.test('caller audio placed late and already written is overwritten where a less delayed arrival places audio', async (t) => {
  const row = await sessionRow()
  const r = recorder(databaseSink(db, row, 8000, 'u'))
  // A second of audio read 100 ms late: placed at [300, 1300) ms, and written (the run reached a second).
  r.caller(tone(8000, 1), 1300)
  await new Promise((resolve) => setTimeout(resolve, 150))
  // The next 100 ms arrive on time: they ended at 1300 ms, not 1400, so they go at [1200, 1300) ms.
  r.caller(tone(800, 2), 1300)
  r.caller(tone(800, 3), 1400)
  await r.finish(2000)
  const [left] = (await readWav(row.id)).channels as [Int16Array]
  t.ok(allEqual(left, 2400, 9600, 1), 'the written second up to where the on-time audio starts')
  t.ok(allEqual(left, 9600, 10400, 2) && allEqual(left, 10400, 11200, 3), 'the on-time audio at its time, in order')
  t.ok(allEqual(left, 11200, 16000, 0), 'nothing after')
})

t.test('a mu-law recorder stores the bytes it is given and reads back as the same WAV as PCM16 storage', async (t) => {
  // What a carrier call gives the recorder: mu-law frames (pseudo-random, so every code appears), or them decoded.
  let seed = 7
  const mulawFrame = () => {
    const bytes = new Uint8Array(160)
    for (let i = 0; i < bytes.length; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      bytes[i] = seed & 0xff
    }
    return bytes
  }
  const caller = Array.from({ length: 60 }, mulawFrame)
  const agentAudio = Array.from({ length: 20 }, mulawFrame)
  const record = async (mulaw: boolean) => {
    const row = await sessionRow()
    const r = recorder(databaseSink(db, row, 8000, 'u'), 8000, { mulaw })
    const audio = (bytes: Uint8Array) => (mulaw ? bytes : decodeMulaw(bytes))
    for (const [i, frame] of caller.entries()) r.caller(audio(frame), 120 + i * 20)
    for (const [i, frame] of agentAudio.entries()) r.agent(audio(frame), 300 + i * 20)
    r.maskCaller(500, 700)
    r.pause(1000)
    r.resume(1100)
    t.same(await r.finish(1400), { status: 'completed', durationMs: 1400 })
    const { rows } = await sql<{ bytes: number; samples: number }>`
      select length(pcm) as bytes, sample_count as samples from recording_chunks where session_id = ${row.id} and pcm is not null`.execute(
      db,
    )
    return { rows, wav: (await readWav(row.id)).bytes }
  }
  const asPcm = await record(false)
  const asMulaw = await record(true)
  t.ok(asMulaw.rows.length > 0 && asMulaw.rows.every((r) => Number(r.bytes) === r.samples), 'one byte a sample')
  t.ok(
    asPcm.rows.every((r) => Number(r.bytes) === 2 * r.samples),
    'PCM16 storage: two bytes a sample',
  )
  t.equal(asMulaw.wav.length, asPcm.wav.length)
  t.ok(asMulaw.wav.equals(asPcm.wav), 'the same WAV, byte for byte (masked and paused stretches included)')
  // Not silence compared with silence: the caller's first frame is in the file where it was spoken (100-120 ms).
  const left = new wavefile.WaveFile(asMulaw.wav).getSamples(false, Int16Array) as unknown as Int16Array[]
  t.same(Array.from(left[0]!.subarray(800, 960)), Array.from(decodeMulaw(caller[0]!)))
  t.ok(allEqual(left[0]!, 4000, 5600, 0), 'the masked stretch is silent')
})

t.test('a recorder given audio in the other encoding fails the recording, not the call', async (t) => {
  const row = await sessionRow()
  const r = recorder(databaseSink(db, row, 8000, 'u'), 8000, { mulaw: true })
  r.caller(new Int16Array(160), 20)
  t.same(await r.finish(100), { status: 'failed', error: 'recording was given PCM16 audio to store as mu-law' })
})

t.test('masking a mu-law frame silences the recording, not the frame (the pipeline has the same bytes)', async (t) => {
  const row = await sessionRow()
  const r = recorder(databaseSink(db, row, 8000, 'u'), 8000, { mulaw: true })
  r.maskCaller(0, 500)
  const frame = Buffer.alloc(160, 0x10)
  r.caller(frame, 20)
  t.ok(
    frame.every((b) => b === 0x10),
    'the frame given is unchanged',
  )
  t.same(await r.finish(100), { status: 'completed', durationMs: 100 })
  const [left] = (await readWav(row.id)).channels as [Int16Array]
  t.ok(allEqual(left, 0, 800, 0), 'silent in the recording')
})
