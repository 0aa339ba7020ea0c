/**
 * The privacy storage levels against a real database: an agent's retention_days used by the sweeper (with the
 * process's, the shorter wins), the recording's privacy metadata route, and DELETE of a session's data purging its
 * transcript, its recorded session.end and its recording.
 */
import t from 'tap'
import { sql } from 'kysely'
import { authorizedSessionRow, startTestGateway } from '../helpers/gateway.js'
import { startWebhookReceiver } from '../helpers/webhook-receiver.js'
import { withoutWelcome } from '../helpers/quiet-agent.js'
import { silentLogger } from '../../core/log.js'
import { MemoryTransport } from '../helpers/memory-transport.js'
import { ChunkRecorder } from '../../gateway/recording/recorder.js'
import { databaseSink } from '../../gateway/recording/database-sink.js'
import { RecordingRetention } from '../../gateway/recording/retention.js'
import { findRecording } from '../../gateway/store/recordings.js'
import type { SessionRow } from '../../gateway/store/schema.js'

const gw = await startTestGateway()
t.teardown(() => gw.close())
const receiver = await startWebhookReceiver()
t.teardown(() => receiver.close())
const db = gw.store.db
const agent = (await gw.request('POST', '/v1/agents', { body: {} })).body

/** A fresh authorized session row to hang a recording on. */
const sessionRow = () => authorizedSessionRow(gw, agent.id)

/** A finished one-second recording of `row`, made `ageDays` ago, kept `retentionDays` by its agent. */
async function recording(row: SessionRow, ageDays: number, retentionDays?: number): Promise<void> {
  const r = new ChunkRecorder({ sink: databaseSink(db, row, 8000, 'u', retentionDays), sampleRate: 8000, log: silentLogger() })
  r.start()
  r.caller(new Int16Array(160).fill(9), 20)
  await r.finish(1000)
  await sql`update recordings set created_at = now() - make_interval(days => ${ageDays}) where session_id = ${row.id}`.execute(db)
}

const exists = async (row: SessionRow) => (await findRecording(db, gw.orgId, agent.id, row.id)) !== undefined

t.test("an agent's retention_days is swept without a process retention; with one, the shorter wins", async (t) => {
  const week = await sessionRow()
  const month = await sessionRow()
  const none = await sessionRow()
  await recording(week, 10, 7)
  await recording(month, 10, 30)
  await recording(none, 100)
  t.equal(await new RecordingRetention(db, silentLogger(), undefined).sweep(), 1)
  t.notOk(await exists(week), 'past its agent retention: gone')
  t.ok(await exists(month), 'within its agent retention: kept')
  t.ok(await exists(none), 'no retention anywhere: kept')
  t.equal(await new RecordingRetention(db, silentLogger(), 5).sweep(), 2, 'the process keeps 5 days: shorter than 30')
  t.notOk(await exists(month))
  t.notOk(await exists(none))
})

t.test('a recording older than its agent retention but within a longer process retention is deleted', async (t) => {
  const row = await sessionRow()
  await recording(row, 10, 3)
  t.equal(await new RecordingRetention(db, silentLogger(), 90).sweep(), 1)
  t.notOk(await exists(row))
})

t.test("the recording's privacy metadata is served to its organization", async (t) => {
  const row = await sessionRow()
  await recording(row, 0)
  await db
    .updateTable('recordings')
    .set({ silenced_spans: JSON.stringify([{ from_ms: 100, to_ms: 900, kind: 'card' }]), paused_spans: null })
    .where('session_id', '=', row.id)
    .execute()
  const path = `/v1/agents/${agent.id}/sessions/${row.id}/recording/metadata`
  const r = await gw.request('GET', path)
  t.equal(r.status, 200)
  t.same(r.body, {
    session_id: row.id,
    status: 'completed',
    sample_rate: 8000,
    duration_ms: 1000,
    silenced: [{ from_ms: 100, to_ms: 900, kind: 'card' }],
    paused: [],
    held: [],
  })
  const other = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'Other' } })
  const foreign = await gw.request('GET', path, { key: other.body.api_key })
  t.equal(foreign.status, 404, "another organization's looks missing")
})

t.test("DELETE of a session's data purges its transcript, its recorded session.end and its recording", async (t) => {
  const a = (await gw.request('POST', '/v1/agents', { body: {} })).body
  const config = withoutWelcome({ ...a.config, session_webhook: { url: `${receiver.url}/hook`, events: ['session.end'] } })
  t.equal((await gw.request('POST', `/v1/agents/${a.id}`, { body: { config } })).status, 200)
  const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: a.id } })
  const opened = await gw.gateway.sessions.open(auth.body.client_session_key, new MemoryTransport(), { ipAddress: null, countryCode: null })
  if (!opened.ok) throw new Error(opened.reason)
  const session = opened.session
  session.addTurn({ turnId: 'u1', timestamp: new Date(), userMessage: 'hello there', assistantMessage: 'hi', latencyMs: 50 })
  const path = `/v1/agents/${a.id}/sessions/${session.id}/data`
  const early = await gw.request('DELETE', path)
  t.equal(early.status, 409, 'a running session is refused')
  t.match(early.body, { error: /has not ended/ })
  await session.end('hangup')
  await receiver.waitFor((r) => r.json?.type === 'session.end' && r.json.session_id === session.id)
  const row = await db.selectFrom('sessions').selectAll().where('id', '=', session.id).executeTakeFirstOrThrow()
  const r = new ChunkRecorder({ sink: databaseSink(db, row, 8000, 'u'), sampleRate: 8000, log: silentLogger() })
  r.start()
  r.caller(new Int16Array(160).fill(9), 20)
  await r.finish(1000)
  const journal = () => db.selectFrom('webhook_deliveries').select('body').where('session_id', '=', session.id).execute()
  await t.resolveMatch(journal(), [{ body: /hello there/ }], 'the delivery record holds the transcript before')

  const purged = await gw.request('DELETE', path)
  t.equal(purged.status, 200)
  t.same(purged.body, { session_id: session.id, transcript_turns: 1, recording_deleted: true, webhook_deliveries: 1 })
  const details = await gw.request('GET', `/v1/agents/${a.id}/sessions/${session.id}`)
  t.same(details.body.transcript, [], 'no transcript left')
  t.equal(details.body.recording_status, 'not_available')
  t.equal((await gw.request('GET', `/v1/agents/${a.id}/sessions/${session.id}/recording`)).status, 404)
  const [delivery] = await journal()
  t.same(JSON.parse(delivery?.body ?? '{}').transcript, [], 'the recorded session.end keeps no words')
  t.notMatch(JSON.stringify(await journal()), /hello there|hi"/)
  const again = await gw.request('DELETE', path)
  t.same(again.body, { session_id: session.id, transcript_turns: 0, recording_deleted: false, webhook_deliveries: 1 }, 'idempotent')
  t.equal((await gw.request('DELETE', `/v1/agents/${a.id}/sessions/sess_missing/data`)).status, 404)
})
