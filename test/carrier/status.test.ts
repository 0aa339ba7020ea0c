import t from 'tap'
import type { CarrierCallStatus } from '../../carrier/carrier.js'
import { parseFormBody } from '../../carrier/twilio/signature.js'
import { CALL_STATUSES, canTransition, isFinalStatus, nextStatus, parseStatusCallback } from '../../carrier/twilio/status.js'

t.test('parses a recorded completed callback', async (t) => {
  const body =
    'Called=%2B15550002222&ToState=CA&CallerCountry=US&Direction=outbound-api&Timestamp=Tue%2C+13+Aug+2024+18%3A55%3A12+%2B0000' +
    '&CallbackSource=call-progress-events&SipResponseCode=200&CallerState=CA&ToZip=&SequenceNumber=3' +
    '&CallSid=CA3f1e2d4c6b8a0f9e7d5c3b1a2f4e6d8c&To=%2B15550002222&CallerZip=&ToCountry=US&CalledZip=' +
    '&ApiVersion=2010-04-01&CalledCity=&CallStatus=completed&Duration=1&From=%2B15550001111&CallDuration=42' +
    '&AccountSid=AC0b5d7c1f9e3a4b6c8d0e2f4a6b8c0d2e&CalledCountry=US&CallerCity=&ToCity=&FromCountry=US' +
    '&Caller=%2B15550001111&FromCity=&CalledState=CA&FromZip=&FromState=CA'
  const result = parseStatusCallback(parseFormBody(body))
  t.ok(result.ok)
  if (!result.ok) return
  t.match(result.update, {
    callSid: 'CA3f1e2d4c6b8a0f9e7d5c3b1a2f4e6d8c',
    accountSid: 'AC0b5d7c1f9e3a4b6c8d0e2f4a6b8c0d2e',
    status: 'completed',
    event: 'completed',
    direction: 'outbound-api',
    from: '+15550001111',
    to: '+15550002222',
    callDurationSec: 42,
    sequenceNumber: 3,
    sipResponseCode: 200,
  })
  t.equal(result.update.timestamp?.toISOString(), '2024-08-13T18:55:12.000Z')
})

t.test('in-progress is the answered event; bad forms are reasons, not throws', async (t) => {
  const answered = parseStatusCallback({ CallSid: 'CA1', CallStatus: 'in-progress' })
  t.match(answered, { ok: true, update: { status: 'in-progress', event: 'answered', callDurationSec: undefined } })
  t.same(parseStatusCallback({ CallStatus: 'ringing' }), { ok: false, reason: 'missing_call_sid' })
  t.same(parseStatusCallback({ CallSid: 'CA1' }), { ok: false, reason: 'missing_status' })
  t.same(parseStatusCallback({ CallSid: 'CA1', CallStatus: 'exploded' }), { ok: false, reason: 'unknown_status' })
  t.same(parseStatusCallback({ CallSid: 'CA1', CallStatus: '__proto__' }), { ok: false, reason: 'unknown_status' })
  t.match(parseStatusCallback({ CallSid: 'CA1', CallStatus: 'No-Answer', CallDuration: 'abc' }), {
    ok: true,
    update: { status: 'no-answer', callDurationSec: undefined },
  })
})

t.test('final statuses', async (t) => {
  const finals = CALL_STATUSES.filter(isFinalStatus)
  t.same(finals, ['completed', 'busy', 'no-answer', 'canceled', 'failed'])
})

t.test('the lifecycle only moves forwards', async (t) => {
  t.ok(canTransition('queued', 'initiated'))
  t.ok(canTransition('initiated', 'ringing'))
  t.ok(canTransition('ringing', 'in-progress'))
  t.ok(canTransition('in-progress', 'completed'))
  t.ok(canTransition('ringing', 'no-answer'))
  t.ok(canTransition('queued', 'failed'))
  t.ok(canTransition('initiated', 'in-progress'), 'skipping a lost callback is fine')
  t.notOk(canTransition('in-progress', 'ringing'))
  t.notOk(canTransition('completed', 'in-progress'))
  t.notOk(canTransition('busy', 'completed'), 'finals are terminal')
  t.notOk(canTransition('ringing', 'ringing'))
})

t.test('nextStatus: out-of-order callbacks never move a call backwards', async (t) => {
  const apply = (arrivals: CarrierCallStatus[]): CarrierCallStatus | undefined =>
    arrivals.reduce<CarrierCallStatus | undefined>((current, incoming) => nextStatus(current, incoming), undefined)
  t.equal(apply(['queued', 'initiated', 'ringing', 'in-progress', 'completed']), 'completed')
  t.equal(apply(['queued', 'ringing', 'initiated']), 'ringing')
  t.equal(apply(['queued', 'in-progress', 'ringing']), 'in-progress')
  t.equal(apply(['queued', 'completed', 'in-progress', 'ringing']), 'completed')
  t.equal(apply(['queued', 'busy', 'completed']), 'busy', 'the first final wins')
  t.equal(nextStatus(undefined, 'ringing'), 'ringing')
})
