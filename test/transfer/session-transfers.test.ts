// A session's stored warm transfers (gateway/store/session-transfers.ts): a start appends an attempt, the other
// facts complete the last one, and the list stays bounded.
import t from 'tap'
import { MAX_TRANSFERS_KEPT, withTransferFact } from '../../gateway/store/session-transfers.js'

const at = new Date('2026-11-27T10:00:00.000Z')

t.test('facts build an attempt: started, answered, connected', async (t) => {
  let list = withTransferFact([], { type: 'transfer.started' }, '+15550001111', at)
  list = withTransferFact(list, { type: 'transfer.answered', atMs: 2_000 }, '+15550001111', at)
  list = withTransferFact(list, { type: 'transfer.connected', atMs: 5_000 }, '+15550001111', at)
  t.same(list, [
    { mode: 'warm', to: '+15550001111', started_at: '2026-11-27T10:00:00.000Z', answered_after_ms: 2_000, connected_after_ms: 5_000 },
  ])
})

t.test('a failure completes the last attempt; a new start appends one', async (t) => {
  let list = withTransferFact([], { type: 'transfer.started' }, '+15550001111', at)
  list = withTransferFact(list, { type: 'transfer.failed', atMs: 30_000, reason: 'no_answer', phase: 'ringing' }, '+15550001111', at)
  list = withTransferFact(list, { type: 'transfer.started' }, 'sip:desk@pbx.example', at)
  t.equal(list.length, 2)
  t.match(list[0], { failed_after_ms: 30_000, failed_reason: 'no_answer', failed_in: 'ringing' })
  t.same(list[1], { mode: 'warm', to: 'sip:desk@pbx.example', started_at: '2026-11-27T10:00:00.000Z' })
})

t.test('a fact without a started attempt changes nothing; the oldest attempts go past the bound', async (t) => {
  t.same(withTransferFact([], { type: 'transfer.answered', atMs: 1 }, '+1', at), [])
  let list = withTransferFact([], { type: 'transfer.started' }, 'first', at)
  for (let i = 0; i < MAX_TRANSFERS_KEPT; i++) list = withTransferFact(list, { type: 'transfer.started' }, `n${i}`, at)
  t.equal(list.length, MAX_TRANSFERS_KEPT)
  t.notOk(
    list.some((x) => x.to === 'first'),
    'the oldest attempt is gone',
  )
})
