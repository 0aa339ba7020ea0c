/**
 * The transcript writer on its own (the database restart end to end is test/carrier-e2e/db-outage.test.ts):
 * order through transient failures, bad data skipped, a bounded buffer that keeps the oldest, giving up.
 */
import t from 'tap'
import { silentLogger } from '../../core/log.js'
import { TranscriptWriter, type PendingTurn } from '../../gateway/sessions/transcript/transcript-writer.js'
import { isDatabaseUnavailable, retryWhileUnavailable } from '../../gateway/store/database-errors.js'

const down = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })

function writer(write: (e: PendingTurn<string>) => Promise<void>, opts: { maxPending?: number; giveUpAfterMs?: number } = {}) {
  return new TranscriptWriter<string>({
    write,
    isTransient: isDatabaseUnavailable,
    log: silentLogger(),
    sessionId: 's1',
    backoffMs: [5, 10],
    ...opts,
  })
}

t.test('turns written while the database is away arrive once it is back, in order, none twice', async (t) => {
  const stored: number[] = []
  let away = true
  const w = writer(async (e) => {
    if (away) throw down()
    stored.push(e.seq)
  })
  for (let seq = 1; seq <= 5; seq++) w.add({ seq, turn: `turn ${seq}` })
  t.equal(await w.flushed(50), false, 'not flushed while the database is away')
  t.equal(w.pending, 5)
  away = false
  t.equal(await w.flushed(2000), true)
  t.same(stored, [1, 2, 3, 4, 5])
  t.equal(w.retried, 1, 'the head turn waited; the others queued behind it')
  t.equal(w.dropped, 0)
})

t.test('a turn the database refuses for its content is skipped, the next ones are written', async (t) => {
  const stored: number[] = []
  const w = writer(async (e) => {
    if (e.seq === 2) throw Object.assign(new Error('value too long'), { code: '22001' })
    stored.push(e.seq)
  })
  for (let seq = 1; seq <= 3; seq++) w.add({ seq, turn: 'x' })
  t.equal(await w.flushed(1000), true)
  t.same(stored, [1, 3])
})

t.test('the buffer is bounded: beyond it the newest turns are dropped and counted, the oldest kept', async (t) => {
  const stored: number[] = []
  let away = true
  const w = writer(
    async (e) => {
      if (away) throw down()
      stored.push(e.seq)
    },
    { maxPending: 3 },
  )
  for (let seq = 1; seq <= 6; seq++) w.add({ seq, turn: 'x' })
  t.equal(w.pending, 3)
  t.equal(w.dropped, 3)
  away = false
  await w.flushed(1000)
  t.same(stored, [1, 2, 3])
})

t.test('a database away for longer than the give-up time costs those turns, not the process', async (t) => {
  const w = writer(async () => Promise.reject(down()), { giveUpAfterMs: 50 })
  w.add({ seq: 1, turn: 'x' })
  w.add({ seq: 2, turn: 'y' })
  t.equal(await w.flushed(2000), true, 'done trying')
  t.equal(w.dropped, 2)
})

t.test('close (shutdown) stops the retries: each turn gets one more try', async (t) => {
  let tries = 0
  const w = writer(async () => {
    tries++
    throw down()
  })
  w.add({ seq: 1, turn: 'x' })
  await new Promise((r) => setTimeout(r, 30))
  w.close()
  t.equal(await w.flushed(1000), true)
  t.equal(w.dropped, 1)
  w.add({ seq: 2, turn: 'y' })
  t.equal(w.pending, 0, 'a closed writer takes nothing more')
  t.ok(tries >= 2)
})

t.test('what counts as the database being away', async (t) => {
  t.ok(isDatabaseUnavailable(down()))
  t.ok(isDatabaseUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })))
  t.ok(isDatabaseUnavailable(Object.assign(new Error('the database system is starting up'), { code: '57P03' })))
  t.ok(isDatabaseUnavailable(Object.assign(new Error('connection failure'), { code: '08006' })))
  t.ok(isDatabaseUnavailable(new Error('Connection terminated unexpectedly')))
  t.ok(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect')))
  t.ok(isDatabaseUnavailable(new Error('wrapped', { cause: down() })), 'through a cause')
  t.notOk(isDatabaseUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' })))
  t.notOk(isDatabaseUnavailable(new Error('something else')))
  t.notOk(isDatabaseUnavailable('ECONNREFUSED'))
})

t.test('retryWhileUnavailable: tries again while the database is away, not for other failures', async (t) => {
  let tries = 0
  const value = await retryWhileUnavailable(
    async () => {
      if (++tries < 3) throw down()
      return 'written'
    },
    { forMs: 5_000 },
  )
  t.equal(value, 'written')
  t.equal(tries, 3)
  let badTries = 0
  await t.rejects(
    retryWhileUnavailable(
      async () => {
        badTries++
        throw Object.assign(new Error('duplicate key'), { code: '23505' })
      },
      { forMs: 5_000 },
    ),
    /duplicate key/,
  )
  t.equal(badTries, 1, 'bad data is not retried')
  await t.rejects(
    retryWhileUnavailable(async () => Promise.reject(down()), { forMs: 300 }),
    /ECONNREFUSED/,
    'the last failure once the time is spent',
  )
})
