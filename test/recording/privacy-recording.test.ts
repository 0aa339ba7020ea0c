/**
 * Privacy controls in the recorder, against a real database: the backend's pause silences both channels (audio already
 * written included), and the caller's redacted words are silenced where the pipeline heard them, listed in the
 * recording's metadata. The WAV is read back with `wavefile`.
 */
import t from 'tap'
import wavefile from 'wavefile'
import { authorizedSessionRow, startTestGateway } from '../helpers/gateway.js'
import { silentLogger } from '../../core/log.js'
import { ChunkRecorder } from '../../gateway/recording/recorder.js'
import { databaseSink } from '../../gateway/recording/database-sink.js'
import { SessionRecording } from '../../gateway/recording/session-recording.js'
import { EstimatedPlayout } from '../../gateway/recording/agent-playout.js'
import { wavBytes, wavSize } from '../../gateway/recording/wav-stream.js'
import { findRecording } from '../../gateway/store/recordings.js'
import { NO_INPUT } from '../../gateway/sessions/no-input.js'
import { encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'

const gw = await startTestGateway()
t.teardown(() => gw.close())
const db = gw.store.db
const agent = (await gw.request('POST', '/v1/agents', { body: {} })).body

/** A fresh authorized session row to hang a recording on. */
const sessionRow = () => authorizedSessionRow(gw, agent.id)

async function readChannels(sessionId: string): Promise<[Int16Array, Int16Array]> {
  const rec = await findRecording(db, gw.orgId, agent.id, sessionId)
  if (rec === undefined || rec.totalSamples === null) throw new Error('no completed recording')
  const file = { sessionId, sampleRate: rec.sampleRate, totalSamples: rec.totalSamples, channels: 2 as const }
  const parts: Buffer[] = []
  for await (const b of wavBytes(db, file, 0, wavSize(file) - 1)) parts.push(b)
  const wav = new wavefile.WaveFile(Buffer.concat(parts))
  return wav.getSamples(false, Int16Array) as unknown as [Int16Array, Int16Array]
}

const tone = (n: number, v: number) => new Int16Array(n).fill(v)
const allEqual = (a: Int16Array, from: number, to: number, v: number) => a.subarray(from, to).every((x) => x === v)

t.test('a pause silences both channels until the resume, also audio already written past it', async (t) => {
  const row = await sessionRow()
  const r = new ChunkRecorder({ sink: databaseSink(db, row, 8000, 'u'), sampleRate: 8000, log: silentLogger(), flushIntervalMs: 50 })
  r.start()
  const playout = new EstimatedPlayout(r, 8000)
  for (let i = 1; i <= 100; i++) r.caller(tone(160, 500), i * 20)
  // A whole second of agent speech sent at 200 ms is placed ahead, before the pause comes.
  playout.sent(1, tone(8000, 700), 200)
  r.pause(600)
  r.resume(1000)
  await r.finish(2000)
  const [left, right] = await readChannels(row.id)
  t.ok(allEqual(left, 0, 4800, 500), 'caller before the pause')
  t.ok(allEqual(left, 4800, 8000, 0), 'caller silent 600 ms to 1 s')
  t.ok(allEqual(left, 8000, 16000, 500), 'caller after the resume')
  t.ok(allEqual(right, 1600, 4800, 700), 'agent before the pause')
  t.ok(allEqual(right, 4800, 8000, 0), 'agent silent in the pause, though placed before it began')
  t.ok(allEqual(right, 8000, 9600, 700), 'agent after the resume')
})

t.test('a pause not resumed lasts to the end', async (t) => {
  const row = await sessionRow()
  const r = new ChunkRecorder({ sink: databaseSink(db, row, 8000, 'u'), sampleRate: 8000, log: silentLogger(), flushIntervalMs: 50 })
  r.start()
  for (let i = 1; i <= 50; i++) r.caller(tone(160, 500), i * 20)
  r.pause(500)
  for (let i = 51; i <= 100; i++) r.caller(tone(160, 500), i * 20)
  await r.finish(2000)
  const [left] = await readChannels(row.id)
  t.ok(allEqual(left, 0, 4000, 500))
  t.ok(allEqual(left, 4000, 16000, 0))
})

t.test('redacted words are silenced where the pipeline heard them and listed in the metadata', async (t) => {
  // The session connected 4 s ago, so the 3 s of caller audio sent at once below lie within it (the timeline's zero
  // is the connection; media time earlier than that would be cut).
  const row = { ...(await sessionRow()), started_at: new Date(Date.now() - 4000) }
  const rec = new SessionRecording({ db, log: silentLogger(), settings: { maskDtmf: true, publicUrl: 'http://x' } }, row, {
    kind: 'carrier',
    audio: { input: 'ulaw_8000', output: 'ulaw_8000' },
  })
  rec.start()
  // Audio before the pipeline started is recorded too; the pipeline's clock starts at its own first chunk.
  const early = rec.tap(NO_INPUT)
  const frame = Buffer.from(encodeMulaw(tone(160, 4000)))
  for (let i = 0; i < 25; i++) early.pushAudio(frame, i * 20)
  const input = rec.tap(NO_INPUT)
  for (let i = 25; i < 150; i++) input.pushAudio(frame, i * 20)
  // Two words of a card said 0.5 s to 0.7 s and 0.9 s to 1.2 s into what the pipeline heard: one stretch.
  rec.silenceCaller([
    { start: 0.5, end: 0.7, kind: 'card' },
    { start: 0.9, end: 1.2, kind: 'card' },
  ])
  const outcome = await rec.finish(4000)
  t.equal(outcome.status, 'completed')
  const [left] = await readChannels(row.id)
  const first = left.findIndex((x) => x !== 0)
  t.ok(first >= 0, 'the caller is in the file')
  const pipelineStart = first + 25 * 160
  const from = pipelineStart + 0.5 * 8000
  const to = pipelineStart + 1.2 * 8000
  t.ok(allEqual(left, from, to, 0), 'silent over the words and the pause between them')
  t.ok(
    left.subarray(first, from).every((x) => x !== 0),
    'heard before',
  )
  t.ok(
    left.subarray(to, first + 150 * 160).every((x) => x !== 0),
    'heard after',
  )
  const stored = await findRecording(db, gw.orgId, agent.id, row.id)
  t.equal(stored?.silencedSpans.length, 1)
  const span = stored?.silencedSpans[0]
  t.equal(span?.kind, 'card')
  t.ok(Math.abs((span?.from_ms ?? 0) - (from * 1000) / 8000) <= 1, `metadata from_ms ${span?.from_ms} at ${(from * 1000) / 8000}`)
  t.ok(Math.abs((span?.to_ms ?? 0) - (to * 1000) / 8000) <= 1, `metadata to_ms ${span?.to_ms} at ${(to * 1000) / 8000}`)
  t.same(stored?.pausedSpans, [])
})
