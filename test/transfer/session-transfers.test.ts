// A session's stored warm transfers (gateway/store/session-transfers.ts): a start appends an attempt, the other
// facts complete the last one, and the list stays bounded.
import t from 'tap'
import {
  MAX_TRANSFER_LINE_CHARS,
  MAX_TRANSFER_LINES,
  MAX_TRANSFERS_KEPT,
  withTransferFact,
  withTransferLine,
} from '../../gateway/store/session-transfers.js'

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

t.test("a bridged leg's line goes to the last attempt, bounded in count and length", async (t) => {
  t.same(withTransferLine([], { speaker: 'caller', text: 'hello', at_ms: 1 }), [], 'no attempt: nothing to add to')
  let list = withTransferFact([], { type: 'transfer.started' }, '+15550001111', at)
  list = withTransferLine(list, { speaker: 'caller', text: 'I want a refund', at_ms: 6_000 })
  list = withTransferLine(list, { speaker: 'human', text: 'x'.repeat(MAX_TRANSFER_LINE_CHARS + 10), at_ms: 7_000 })
  t.same(list[0]?.transcript?.[0], { speaker: 'caller', text: 'I want a refund', at_ms: 6_000 })
  t.equal(list[0]?.transcript?.[1]?.text.length, MAX_TRANSFER_LINE_CHARS, 'a long line is cut')
  for (let i = 0; i < MAX_TRANSFER_LINES + 5; i++) list = withTransferLine(list, { speaker: 'caller', text: `${i}`, at_ms: i })
  t.equal(list[0]?.transcript?.length, MAX_TRANSFER_LINES, 'at most the bound')
})
