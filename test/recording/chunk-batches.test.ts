/**
 * Recording chunks of many calls written together, on a real database: the appends of one window share
 * a statement and every chunk is stored; a full batch is written without waiting for its window; rows the database
 * refuses fail only their own session; a database that is unavailable fails every append in the batch (each
 * recorder then retries on its own).
 */
import t from 'tap'
import { sql } from 'kysely'
import { authorizedSessionRow, startTestGateway } from '../helpers/gateway.js'
import { ChunkBatches } from '../../gateway/recording/chunk-batches.js'
import { appendRecordingChunkRows, type RecordingChunk, type RecordingChunkRow } from '../../gateway/store/recording-chunks.js'
import { createRecording } from '../../gateway/store/recordings.js'

const gw = await startTestGateway()
t.teardown(() => gw.close())
const db = gw.store.db
const agent = (await gw.request('POST', '/v1/agents', { body: {} })).body

/** A session with a recording started, as a recorder's sink would leave it. */
async function recordingSession(): Promise<string> {
  const row = await authorizedSessionRow(gw, agent.id)
  await createRecording(db, { sessionId: row.id, organizationId: row.organization_id, sampleRate: 8000 })
  return row.id
}

const chunk = (seq: number, fill = seq): RecordingChunk => ({
  seq,
  channel: seq % 2,
  startSample: seq * 8000,
  sampleCount: 8000,
  pcm: Buffer.alloc(16_000, fill),
})

/** Counts the statements (and rows) the batches write, writing them for real. */
function counted(): { write: (rows: readonly RecordingChunkRow[]) => Promise<void>; statements: number[] } {
  const statements: number[] = []
  return {
    statements,
    write: async (rows) => {
      statements.push(rows.length)
      await appendRecordingChunkRows(db, rows)
    },
  }
}

async function storedChunks(sessionId: string): Promise<{ seq: number; bytes: number; first: number }[]> {
  const rows = await db.selectFrom('recording_chunks').select(['seq', 'pcm']).where('session_id', '=', sessionId).orderBy('seq').execute()
  return rows.map((r) => ({ seq: r.seq, bytes: r.pcm?.length ?? 0, first: r.pcm?.[0] ?? -1 }))
}

t.test('the appends of many calls in one window share one statement, and every chunk is stored', async (t) => {
  const sessions = await Promise.all(Array.from({ length: 12 }, () => recordingSession()))
  const c = counted()
  const batches = new ChunkBatches(db, { windowMs: 50, write: c.write })
  await Promise.all(sessions.map((id, i) => batches.append(id, [chunk(1, i), chunk(2, i)])))
  t.same(c.statements, [24], 'one statement of 24 rows')
  t.equal(batches.statements, 1)
  for (const [i, id] of sessions.entries()) {
    t.same(await storedChunks(id), [
      { seq: 1, bytes: 16_000, first: i },
      { seq: 2, bytes: 16_000, first: i },
    ])
  }
  // The next window is a statement of its own.
  await batches.append(sessions[0]!, [chunk(3)])
  t.same(c.statements, [24, 1])
  // Written again (its answer lost with a connection): the chunks already there are kept, nothing fails.
  await batches.append(sessions[0]!, [chunk(3, 99)])
  t.equal((await storedChunks(sessions[0]!)).find((r) => r.seq === 3)?.first, 3)
})

t.test('audio is stored out of line as it came, without a compression attempt (migration 0017)', async (t) => {
  const id = await recordingSession()
  // A run of one byte value is what pglz compresses best: with the column's default storage it would be compressed.
  await appendRecordingChunkRows(db, [{ sessionId: id, chunk: chunk(1, 7) }])
  const { rows } = await sql<{ storage: string; method: string | null; size: number }>`
    select a.attstorage as storage, pg_column_compression(c.pcm) as method, pg_column_size(c.pcm) as size
    from recording_chunks c join pg_attribute a on a.attrelid = 'recording_chunks'::regclass and a.attname = 'pcm'
    where c.session_id = ${id}`.execute(db)
  t.same(
    rows.map((r) => ({ ...r, size: Number(r.size) })),
    [{ storage: 'e', method: null, size: 16_000 }],
  )
  t.same(await storedChunks(id), [{ seq: 1, bytes: 16_000, first: 7 }])
})

t.test('an append after a quiet window is written at once; the next waits for the window', async (t) => {
  const id = await recordingSession()
  const c = counted()
  const batches = new ChunkBatches(db, { windowMs: 400, write: c.write })
  const started = performance.now()
  await batches.append(id, [chunk(1)])
  t.same(c.statements, [1], 'written in the same tick, without waiting for a window')
  let second = false
  const pending = batches.append(id, [chunk(2)]).then(() => (second = true))
  await new Promise((r) => setTimeout(r, 100))
  t.equal(second, false, 'the second append waits for the window')
  t.same(c.statements, [1])
  await pending
  t.ok(performance.now() - started >= 400, 'the second statement started a window after the first')
  t.same(c.statements, [1, 1])
})

t.test('a batch that reaches its row or byte bound is written without waiting for its window', async (t) => {
  const [a, b] = [await recordingSession(), await recordingSession()]
  const c = counted()
  const batches = new ChunkBatches(db, { windowMs: 600_000, maxRows: 4, maxBytes: 1024 * 1024, write: c.write })
  const first = batches.append(a, [chunk(1), chunk(2)])
  await batches.append(b, [chunk(1), chunk(2)])
  await first
  t.same(c.statements, [4])
  const bytes = new ChunkBatches(db, { windowMs: 600_000, maxRows: 100, maxBytes: 40_000, write: c.write })
  await Promise.all([bytes.append(a, [chunk(3), chunk(4)]), bytes.append(b, [chunk(3), chunk(4)])])
  t.same(c.statements, [4, 4], '64,000 bytes passed the 40,000 bound')
  t.equal((await storedChunks(a)).length, 4)
})

t.test('rows the database refuses fail only their own session', async (t) => {
  const good = [await recordingSession(), await recordingSession()]
  // No recording row: its chunks break the foreign key, and the database does not say whose rows they were.
  const orphan = (await authorizedSessionRow(gw, agent.id)).id
  const c = counted()
  const batches = new ChunkBatches(db, { windowMs: 50, write: c.write })
  const results = await Promise.allSettled([
    batches.append(good[0]!, [chunk(1)]),
    batches.append(orphan, [chunk(1)]),
    batches.append(good[1]!, [chunk(1), chunk(2)]),
  ])
  t.same(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  )
  t.match(String((results[1] as PromiseRejectedResult).reason), /foreign key/)
  t.same(c.statements, [4, 1, 1, 2], 'the batch, then each session alone')
  t.equal((await storedChunks(good[0]!)).length, 1)
  t.equal((await storedChunks(good[1]!)).length, 2)
  t.same(await storedChunks(orphan), [])
})

t.test('a database that is unavailable fails every append of the batch with its error, and nothing is retried here', async (t) => {
  const down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
  let writes = 0
  const batches = new ChunkBatches(db, {
    windowMs: 20,
    write: async () => {
      writes++
      throw down
    },
  })
  const results = await Promise.allSettled([batches.append('a', [chunk(1)]), batches.append('b', [chunk(1)])])
  t.same(
    results.map((r) => (r.status === 'rejected' ? r.reason : r.status)),
    [down, down],
  )
  t.equal(writes, 1, 'the recorders retry (recorder.ts), not the batches')
  t.equal(await batches.append('c', []).then(() => 'empty'), 'empty', 'nothing to write resolves at once')
  t.equal(writes, 1)
})
