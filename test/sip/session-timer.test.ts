import t from 'tap'
import { canonicalHeaderName, type SipHeader } from '../../transports/sip/message/sip-message.js'
import { negotiateSessionTimer, sessionTimerDeadline } from '../../transports/sip/calls/session-timer.js'

/** Headers as the message codec delivers them: names canonical (`x` -> `Session-Expires`). */
const req = (...headers: [string, string][]): { headers: SipHeader[] } => ({
  headers: headers.map(([name, value]) => ({ name: canonicalHeaderName(name), value })),
})

t.test('no Session-Expires: no timer', async (t) => {
  t.same(negotiateSessionTimer(req(['Supported', 'timer'])), { kind: 'none' })
})

t.test('too small: 422 with our Min-SE (RFC 4028 section 9)', async (t) => {
  t.same(negotiateSessionTimer(req(['Session-Expires', '60'])), {
    kind: 'too_small',
    status: 422,
    headers: [{ name: 'Min-SE', value: '90' }],
  })
  t.same(negotiateSessionTimer(req(['Session-Expires', '300']), { minSe: 600 }), {
    kind: 'too_small',
    status: 422,
    headers: [{ name: 'Min-SE', value: '600' }],
  })
})

t.test('refresher: the UAC choice, else the UAC when it supports timer, else us; Require: timer when the UAC refreshes', async (t) => {
  t.same(negotiateSessionTimer(req(['Session-Expires', '1800;refresher=uac'], ['Supported', 'replaces, timer'])), {
    kind: 'timer',
    intervalS: 1800,
    refresher: 'uac',
    headers: [
      { name: 'Session-Expires', value: '1800;refresher=uac' },
      { name: 'Require', value: 'timer' },
    ],
  })
  const uas = negotiateSessionTimer(req(['x', '1800;refresher=uas'], ['k', 'timer']))
  t.same(uas.kind === 'timer' && [uas.refresher, uas.headers.length], ['uas', 1], 'compact x and k, as decoded')
  const unspecified = negotiateSessionTimer(req(['Session-Expires', '900'], ['Supported', 'timer']))
  t.equal(unspecified.kind === 'timer' && unspecified.refresher, 'uac')
  const proxyInserted = negotiateSessionTimer(req(['Session-Expires', '900']))
  t.equal(proxyInserted.kind === 'timer' && proxyInserted.refresher, 'uas', 'a UAC without timer support cannot refresh')
})

t.test('a long interval is lowered to our maximum, never below the request Min-SE', async (t) => {
  const lowered = negotiateSessionTimer(req(['Session-Expires', '86400'], ['Supported', 'timer']), { maxSe: 1800 })
  t.equal(lowered.kind === 'timer' && lowered.intervalS, 1800)
  const floored = negotiateSessionTimer(req(['Session-Expires', '7200'], ['Min-SE', '3600'], ['Supported', 'timer']), { maxSe: 1800 })
  t.equal(floored.kind === 'timer' && floored.intervalS, 3600)
})

t.test('malformed values are a 400, not a throw', async (t) => {
  t.equal(negotiateSessionTimer(req(['Session-Expires', 'soon'])).kind, 'bad_request')
  t.equal(negotiateSessionTimer(req(['Session-Expires', '1800;;'])).kind, 'bad_request')
  t.equal(negotiateSessionTimer(req(['Session-Expires', '1800'], ['Min-SE', 'x'])).kind, 'bad_request')
})

t.test('deadlines: refresh at half the interval; BYE at interval minus min(32 s, a third)', async (t) => {
  t.same(sessionTimerDeadline(1800, true), { refreshInMs: 900_000 })
  t.same(sessionTimerDeadline(1800, false), { byeInMs: 1_768_000 })
  t.same(sessionTimerDeadline(90, false), { byeInMs: 60_000 })
})
