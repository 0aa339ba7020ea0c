/**
 * Recordings in an S3-compatible object store (s3rver, an S3 emulator): a recorded browser session's file moves
 * there when it completes, its chunks leave the database, and any replica answers the download with a redirect to
 * a short-lived presigned URL that serves the WAV (and byte ranges) itself; the mono mixdown likewise. A store that
 * is down loses nothing (the database keeps serving until a sweep moves it); deletion and retention delete the files.
 */
import t from 'tap'
import wavefile from 'wavefile'
import { sql } from 'kysely'
import { startTestGateway } from '../helpers/gateway.js'
import { closed, openBrowserSession } from '../helpers/ws-client.js'
import { startS3 } from '../helpers/s3.js'
import { eventually } from '../helpers/eventually.js'

const s3 = await startS3()
t.teardown(() => s3.close())
const gw = await startTestGateway({ ...s3.env, RECORDING_RETENTION_DAYS: '30' })
t.teardown(() => gw.close())
const db = gw.store.db
{
  const org = await gw.request('PATCH', `/admin/v1/organizations/${gw.orgId}`, { admin: true, body: { recording_enabled: true } })
  if (org.status !== 200) throw new Error(org.text)
}
const agent = (await gw.request('POST', '/v1/agents', { body: {} })).body
const path = (sessionId: string) => `/v1/agents/${agent.id}/sessions/${sessionId}/recording`
const keyOf = (sessionId: string) => `recordings/${gw.orgId}/${sessionId}.wav`
const monoKeyOf = (sessionId: string) => `recordings/${gw.orgId}/${sessionId}-mono.wav`

/** A browser session that hears the welcome, speaks a 600 Hz tone for 600 ms and hangs up; its session id. */
async function recordedSession(): Promise<string> {
  const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agent.id } })
  const c = await openBrowserSession(gw.url, auth.body.client_session_key)
  await c.waitFor((m) => m.type === 'turn.end' && m.role === 'assistant')
  for (let f = 0; f < 30; f++) {
    const pcm = Buffer.alloc(320)
    for (let i = 0; i < 160; i++) pcm.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 600 * (f * 160 + i)) / 8000) * 10000), i * 2)
    c.send({ type: 'client.audio', content: pcm.toString('base64') })
    await new Promise((r) => setTimeout(r, 20))
  }
  const gone = closed(c.ws)
  c.ws.close()
  await gone
  const row = await db
    .selectFrom('sessions')
    .select('id')
    .where('conversation_id', '=', auth.body.conversation_id)
    .executeTakeFirstOrThrow()
  return row.id
}

async function stored(sessionId: string) {
  const rec = await db.selectFrom('recordings').selectAll().where('session_id', '=', sessionId).executeTakeFirst()
  const chunks = await db
    .selectFrom('recording_chunks')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('session_id', '=', sessionId)
    .executeTakeFirstOrThrow()
  return { rec, chunks: Number(chunks.n) }
}

function parse(bytes: Buffer) {
  const wav = new wavefile.WaveFile(bytes)
  const fmt = wav.fmt as { numChannels: number; sampleRate: number; bitsPerSample: number }
  const samples = wav.getSamples(false, Int16Array) as unknown as Int16Array[] | Int16Array
  return { fmt, channels: fmt.numChannels === 1 ? [samples as Int16Array] : (samples as Int16Array[]) }
}

const rms = (a: Int16Array) => Math.sqrt(a.reduce((s, x) => s + x * x, 0) / Math.max(1, a.length))

t.test('a finished recording moves to the object store; every replica redirects its download there', async (t) => {
  const sessionId = await recordedSession()
  const moved = await eventually(
    async () => {
      const s = await stored(sessionId)
      return s.rec?.object_key ? s : undefined
    },
    20_000,
    'the move',
  )
  t.equal(moved.rec?.object_key, keyOf(sessionId))
  t.equal(moved.chunks, 0, 'its chunks left the database')
  t.ok(await s3.exists(keyOf(sessionId)), 'the stereo file is in the bucket')
  t.ok(await s3.exists(monoKeyOf(sessionId)), 'and its mono mixdown')

  const other = await startTestGateway({ ...s3.env }, { db: gw.db })
  t.teardown(() => other.close())
  for (const base of [gw.url, other.url]) {
    const res = await fetch(`${base}${path(sessionId)}`, { headers: { authorization: `Bearer ${gw.apiKey}` }, redirect: 'manual' })
    t.equal(res.status, 302, 'a redirect')
    const location = new URL(res.headers.get('location') ?? '')
    t.equal(`${location.origin}${location.pathname}`, `${s3.endpoint}/${s3.bucket}/${keyOf(sessionId)}`)
    t.equal(location.searchParams.get('X-Amz-Expires'), '300', 'short-lived (RECORDING_S3_URL_TTL_SECONDS)')
    t.match(location.searchParams.get('X-Amz-Signature'), /^[0-9a-f]{64}$/, 'presigned')
    t.equal(res.headers.get('cache-control'), 'no-store')
  }

  // A client following the redirect gets the WAV from the store, byte ranges included.
  const res = await fetch(`${other.url}${path(sessionId)}`, { headers: { authorization: `Bearer ${gw.apiKey}` } })
  t.equal(res.status, 200)
  t.equal(res.headers.get('content-type'), 'audio/wav')
  const stereo = parse(Buffer.from(await res.arrayBuffer()))
  t.match(stereo.fmt, { numChannels: 2, sampleRate: 16_000, bitsPerSample: 16 })
  const [left, right] = stereo.channels as [Int16Array, Int16Array]
  const session = await db.selectFrom('sessions').select(['duration_ms']).where('id', '=', sessionId).executeTakeFirstOrThrow()
  t.ok(Math.abs((left.length * 1000) / 16_000 - Number(session.duration_ms)) <= 100, 'as long as the session')
  t.ok(rms(left) > 500, `the caller's tone is in the left channel (rms ${rms(left).toFixed(0)})`)
  t.ok(rms(right) > 100, `the welcome is in the right channel (rms ${rms(right).toFixed(0)})`)

  const ranged = await fetch(`${gw.url}${path(sessionId)}`, { headers: { authorization: `Bearer ${gw.apiKey}`, range: 'bytes=0-43' } })
  t.equal(ranged.status, 206)
  const header = Buffer.from(await ranged.arrayBuffer())
  t.equal(header.length, 44)
  t.equal(header.toString('latin1', 0, 4), 'RIFF')

  const monoRes = await fetch(`${gw.url}${path(sessionId)}?channels=mono`, { headers: { authorization: `Bearer ${gw.apiKey}` } })
  t.match(monoRes.url, /-mono\.wav\?/)
  const mono = parse(Buffer.from(await monoRes.arrayBuffer()))
  t.match(mono.fmt, { numChannels: 1, sampleRate: 16_000 })
  const [m] = mono.channels as [Int16Array]
  t.equal(m.length, left.length)
  t.ok(
    m.every((x, i) => x === Math.max(-32768, Math.min(32767, (left[i] as number) + (right[i] as number)))),
    'the mono file is the mixdown of the stereo one',
  )

  // A gateway without the object store configured cannot serve it, and says why.
  const plain = await startTestGateway({}, { db: gw.db })
  t.teardown(() => plain.close())
  const refused = await plain.request('GET', path(sessionId), { key: gw.apiKey })
  t.equal(refused.status, 503)
  t.match(refused.body, { code: 'recording_store_unavailable', error: /RECORDING_S3_BUCKET/ })

  t.equal((await gw.request('DELETE', path(sessionId))).status, 204)
  t.notOk(await s3.exists(keyOf(sessionId)), 'deleting the recording deletes its file')
  t.notOk(await s3.exists(monoKeyOf(sessionId)), 'and the mixdown')
  t.equal((await gw.request('GET', path(sessionId))).status, 404)
})

t.test('a store that is down loses nothing: the database serves until a sweep moves the file', async (t) => {
  await s3.stop()
  const sessionId = await recordedSession()
  const done = await eventually(
    async () => {
      const s = await stored(sessionId)
      return s.rec?.status === 'completed' ? s : undefined
    },
    20_000,
    'the completed recording',
  )
  await gw.gateway.recordingMover?.idle()
  t.equal((await stored(sessionId)).rec?.object_key, null, 'not moved')
  t.ok(done.chunks > 0, 'its audio is in the database')
  const res = await fetch(`${gw.url}${path(sessionId)}`, { headers: { authorization: `Bearer ${gw.apiKey}` }, redirect: 'manual' })
  t.equal(res.status, 200, 'served from the database')
  t.match(parse(Buffer.from(await res.arrayBuffer())).fmt, { numChannels: 2 })

  // A recording the store never got is deleted from the database alone.
  const deleteWhileDown = await gw.request('DELETE', path(sessionId))
  t.equal(deleteWhileDown.status, 204, 'a recording still in the database needs no store to be deleted')

  const second = await recordedSession()
  await eventually(async () => ((await stored(second)).rec?.status === 'completed' ? true : undefined), 20_000, 'the completed recording')
  await gw.gateway.recordingMover?.idle()
  await s3.start()
  await gw.gateway.recordingMover?.sweep(new Date(), 0)
  t.equal((await stored(second)).rec?.object_key, keyOf(second), 'the sweep moved it once the store was back')
  t.equal((await stored(second)).chunks, 0)
  const after = await fetch(`${gw.url}${path(second)}`, { headers: { authorization: `Bearer ${gw.apiKey}` }, redirect: 'manual' })
  t.equal(after.status, 302)

  await s3.stop()
  const refused = await gw.request('DELETE', path(second))
  t.equal(refused.status, 503, 'deleting a moved recording while the store is down')
  t.match(refused.body, { code: 'recording_store_failed' })
  t.equal((await stored(second)).rec?.object_key, keyOf(second), 'the recording is still there')
  await s3.start()
})

t.test('retention deletes old recordings with their files', async (t) => {
  const sessionId = await recordedSession()
  await eventually(async () => ((await stored(sessionId)).rec?.object_key ? true : undefined), 20_000, 'the move')
  t.ok(await s3.exists(keyOf(sessionId)))
  t.equal(await gw.gateway.recordingRetention?.sweep(new Date()), 0, 'nothing is 30 days old yet')
  const n = await gw.gateway.recordingRetention?.sweep(new Date(Date.now() + 31 * 86_400_000))
  t.ok((n ?? 0) >= 1, `${n} deleted`)
  t.equal((await stored(sessionId)).rec, undefined, 'the row is gone')
  t.notOk(await s3.exists(keyOf(sessionId)), 'and its file')
  t.notOk(await s3.exists(monoKeyOf(sessionId)))
  const details = await gw.request('GET', `/v1/agents/${agent.id}/sessions/${sessionId}`)
  t.equal(details.body.recording_status, 'not_available')
})
