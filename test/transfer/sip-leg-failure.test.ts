/**
 * How a SIP human leg's failed INVITE fails a warm transfer: 486/600 busy, 603 declined,
 * 408/480/487 no answer, anything else (and timer B, an unusable answer) failed; our own CANCEL is no news.
 */
import t from 'tap'
import { sipLegFailure } from '../../gateway/transfer/sip-warm-transfer.js'

t.test('each final answer maps to its reason', async (t) => {
  const rejected = (status: number) => sipLegFailure({ kind: 'rejected', status, reason: 'x' })
  t.same([486, 600].map(rejected), ['busy', 'busy'])
  t.equal(rejected(603), 'declined')
  t.same([408, 480, 487].map(rejected), ['no_answer', 'no_answer', 'no_answer'])
  t.same([403, 404, 484, 488, 500, 503].map(rejected), Array(6).fill('failed'))
  t.equal(sipLegFailure({ kind: 'timeout' }), 'failed')
  t.equal(sipLegFailure({ kind: 'bad_answer', reason: 'no audio' }), 'failed')
  t.equal(sipLegFailure({ kind: 'cancelled' }), undefined, 'our CANCEL: the transfer already knows why')
})
