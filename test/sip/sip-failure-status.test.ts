/**
 * How an outbound SIP attempt that was not answered maps to the call statuses the carrier path reports (and so
 * to the session's `call_<status>` end reason and its session.end webhook).
 */
import t from 'tap'
import { sipFailureStatus } from '../../gateway/outbound/sip-outbound-calls.js'

t.test('final responses, timeouts and cancels map to carrier call statuses', async (t) => {
  const rejected = (status: number) => sipFailureStatus({ kind: 'rejected', status, reason: 'x' }, false)
  t.same([486, 600, 603].map(rejected), ['busy', 'busy', 'busy'], 'busy here, busy everywhere, decline')
  t.same(
    [408, 480, 487].map(rejected),
    ['no-answer', 'no-answer', 'no-answer'],
    'request timeout, temporarily unavailable, terminated by the far end',
  )
  t.same([403, 404, 484, 488, 500, 503].map(rejected), Array(6).fill('failed'), 'anything else is a failure')
  t.equal(sipFailureStatus({ kind: 'timeout' }, false), 'failed', 'no answer at all from the trunk (timer B)')
  t.equal(sipFailureStatus({ kind: 'bad_answer', reason: 'no codec' }, false), 'failed')
  t.equal(sipFailureStatus({ kind: 'cancelled' }, true), 'no-answer', 'cancelled at the ring timeout')
  t.equal(sipFailureStatus({ kind: 'cancelled' }, false), 'canceled', 'cancelled for another reason')
})
