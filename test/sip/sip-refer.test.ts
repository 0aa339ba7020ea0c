/**
 * The REFER side of a blind transfer (transports/sip/sip-refer.ts) on a virtual clock: the Refer-To a target
 * becomes, the sipfrag status line, and the subscription followed to its outcome (2xx sipfrag; a refused REFER,
 * a failing target, a subscription ended without an outcome, no answer or no final NOTIFY in time).
 */
import t from 'tap'
import type { TransferTarget } from '../../core/transfer-target.js'
import {
  REFER_NOTIFY_TIMEOUT_MS,
  type ReferOutcome,
  ReferSubscription,
  referTo,
  sipfragStatus,
} from '../../transports/sip/calls/sip-refer.js'
import type { SipRequest } from '../../transports/sip/message/sip-message.js'
import type { TimerScheduler } from '../../transports/sip/timer-scheduler.js'

/** A virtual clock: `advance` fires what falls due, in order. */
function virtualClock(): TimerScheduler & { advance(ms: number): void; readonly pending: number } {
  let now = 0
  const timers = new Set<{ at: number; fire: () => void }>()
  return {
    schedule(ms, fire) {
      const timer = { at: now + ms, fire }
      timers.add(timer)
      return { cancel: () => void timers.delete(timer) }
    },
    advance(ms) {
      const until = now + ms
      for (;;) {
        const next = [...timers].filter((x) => x.at <= until).sort((a, b) => a.at - b.at)[0]
        if (next === undefined) break
        timers.delete(next)
        now = next.at
        next.fire()
      }
      now = until
    },
    get pending() {
      return timers.size
    },
  }
}

function notify(frag: string | undefined, state = 'active;expires=60', event = 'refer'): SipRequest {
  return {
    kind: 'request',
    method: 'NOTIFY',
    uri: 'sip:127.0.0.1:5060',
    headers: [
      { name: 'Event', value: event },
      { name: 'Subscription-State', value: state },
      ...(frag === undefined ? [] : [{ name: 'Content-Type', value: 'message/sipfrag;version=2.0' }]),
    ],
    body: Buffer.from(frag ?? ''),
  }
}

function subscription() {
  const clock = virtualClock()
  const outcomes: ReferOutcome[] = []
  const sub = new ReferSubscription(clock, REFER_NOTIFY_TIMEOUT_MS, (o) => outcomes.push(o))
  return { clock, outcomes, sub }
}

t.test('Refer-To: a number at the given host, a SIP URI with its X- headers as URI headers', async (t) => {
  const number: TransferTarget = { kind: 'number', to: '+14155550100', callerId: undefined }
  t.equal(referTo(number, 'pbx.example.net:5070'), '<sip:+14155550100@pbx.example.net:5070>')
  const sip: TransferTarget = {
    kind: 'sip',
    to: 'sips:queue@cc.example.com',
    callerId: undefined,
    headers: [
      { name: 'X-Ticket', value: 'T-42' },
      { name: 'X-Reason', value: 'billing dispute&more' },
    ],
  }
  t.equal(referTo(sip, 'ignored'), '<sips:queue@cc.example.com?X-Ticket=T-42&X-Reason=billing%20dispute%26more>')
  t.equal(referTo({ ...sip, headers: [] }, 'ignored'), '<sips:queue@cc.example.com>')
})

t.test('sipfrag status lines', async (t) => {
  t.equal(sipfragStatus('SIP/2.0 100 Trying\r\n'), 100)
  t.equal(sipfragStatus('SIP/2.0 200 OK'), 200)
  t.equal(sipfragStatus('\r\nSIP/2.0 503 Service Unavailable\r\nRetry-After: 5\r\n'), 503)
  t.equal(sipfragStatus('SIP/2.0 200'), 200, 'a status without its reason phrase')
  t.equal(sipfragStatus('INVITE sip:a@b SIP/2.0'), null, 'a request line')
  t.equal(sipfragStatus('SIP/2.0 2000 OK'), null)
  t.equal(sipfragStatus('SIP/2.0 099 Odd'), null)
  t.equal(sipfragStatus(''), null)
})

t.test('202, then NOTIFY 100, 180 and 200: success; each NOTIFY answered 200, a late one 481', async (t) => {
  const { clock, outcomes, sub } = subscription()
  sub.answered(202)
  t.equal(sub.notify(notify('SIP/2.0 100 Trying')), 200)
  clock.advance(10_000)
  t.equal(sub.notify(notify('SIP/2.0 180 Ringing')), 200)
  t.same(outcomes, [], 'progress is not an outcome')
  t.equal(sub.notify(notify('SIP/2.0 200 OK', 'terminated;reason=noresource')), 200)
  t.same(outcomes, [{ ok: true }])
  t.notOk(sub.pending)
  t.equal(sub.notify(notify('SIP/2.0 200 OK')), 481, 'the subscription is over')
  t.equal(clock.pending, 0, 'no timer left')
})

t.test('a NOTIFY that overtakes the 202 counts; the late 202 changes nothing', async (t) => {
  const { clock, outcomes, sub } = subscription()
  t.equal(sub.notify(notify('SIP/2.0 200 OK', 'terminated')), 200)
  sub.answered(202)
  t.same(outcomes, [{ ok: true }])
  t.equal(clock.pending, 0)
})

t.test('refusals and failures', async (t) => {
  const cases: [string, (s: ReferSubscription) => void, string][] = [
    ['a 603 REFER', (s) => s.answered(603), 'the SIP peer refused the REFER (603)'],
    ['no answer to the REFER', (s) => s.answered('timeout'), 'the SIP peer did not answer the REFER'],
    [
      'a failing target',
      (s) => {
        s.answered(202)
        s.notify(notify('SIP/2.0 486 Busy Here', 'terminated'))
      },
      'the transfer target answered 486',
    ],
    [
      'a subscription terminated after progress only',
      (s) => {
        s.answered(202)
        s.notify(notify('SIP/2.0 180 Ringing', 'terminated;reason=timeout'))
      },
      'the SIP peer ended the transfer before its outcome',
    ],
    [
      'a subscription terminated without a body',
      (s) => {
        s.answered(202)
        s.notify(notify(undefined, 'terminated;reason=noresource'))
      },
      'the SIP peer ended the transfer without its outcome',
    ],
    ['the call ending', (s) => s.abort('the caller hung up'), 'the caller hung up'],
  ]
  for (const [name, act, error] of cases) {
    const { clock, outcomes, sub } = subscription()
    act(sub)
    t.same(outcomes, [{ ok: false, error }], name)
    t.equal(clock.pending, 0, `${name}: no timer left`)
  }
})

t.test('no final NOTIFY within the bound after the 202: failure, naming the last progress', async (t) => {
  const { clock, outcomes, sub } = subscription()
  clock.advance(5_000)
  sub.answered(202)
  sub.notify(notify('SIP/2.0 100 Trying'))
  clock.advance(REFER_NOTIFY_TIMEOUT_MS - 1)
  t.same(outcomes, [], 'the bound runs from the 202')
  clock.advance(1)
  t.same(outcomes, [{ ok: false, error: 'the transfer did not complete within 30 s (last progress 100)' }])
})

t.test('a REFER never answered at all fails at the bound', async (t) => {
  const { clock, outcomes } = subscription()
  clock.advance(REFER_NOTIFY_TIMEOUT_MS)
  t.same(outcomes, [{ ok: false, error: 'the transfer did not complete within 30 s (no progress reported)' }])
})

t.test('another event package gets 489, a body that is no sipfrag 400, and the transfer still waits', async (t) => {
  const { outcomes, sub } = subscription()
  sub.answered(202)
  t.equal(sub.notify(notify('SIP/2.0 200 OK', 'active', 'presence')), 489)
  t.equal(sub.notify(notify('hello')), 400)
  const wrongType = notify('SIP/2.0 200 OK')
  t.equal(
    sub.notify({ ...wrongType, headers: wrongType.headers.map((h) => (h.name === 'Content-Type' ? { ...h, value: 'text/plain' } : h)) }),
    400,
  )
  t.same(outcomes, [])
  t.ok(sub.pending)
  t.equal(sub.notify(notify('SIP/2.0 200 OK')), 200)
  t.same(outcomes, [{ ok: true }])
})
