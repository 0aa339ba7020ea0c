import t from 'tap'
import { SIP_REFUSALS, sipRefusal } from '../../transports/sip/admission/sip-refusals.js'
import { dialledNumber } from '../../transports/sip/admission/sip-trunk-invites.js'
import type { SipRequest } from '../../transports/sip/message/sip-message.js'

t.test('each refusal has one SIP status and reason, as docs/reference/sip.md lists them', async (t) => {
  t.same(Object.fromEntries(Object.entries(SIP_REFUSALS).map(([k, v]) => [k, v.status])), {
    unknown_source: 403,
    auth_required: 401,
    auth_failed: 403,
    auth_blocked: 403,
    not_in_service: 404,
    clients_disabled: 403,
    insufficient_balance: 403,
    concurrency_limit: 486,
    shutting_down: 503,
    error: 480,
  })
  t.same(sipRefusal('concurrency_limit'), { admit: false, status: 486, reason: 'concurrent session limit reached', headers: [] })
  t.same(sipRefusal('shutting_down').headers, [{ name: 'Retry-After', value: '30' }], 'a draining replica says when to retry')
  const challenge = sipRefusal('auth_required', [{ name: 'WWW-Authenticate', value: 'Digest realm="x"' }])
  t.same([challenge.status, challenge.headers], [401, [{ name: 'WWW-Authenticate', value: 'Digest realm="x"' }]])
})

function invite(uri: string, to: string): SipRequest {
  return { kind: 'request', method: 'INVITE', uri, headers: [{ name: 'To', value: to }], body: Buffer.alloc(0) }
}

t.test('the dialled number: the Request-URI user part, else the To user part, as E.164', async (t) => {
  t.equal(dialledNumber(invite('sip:+14155552671@gw', '<sip:x@gw>'))?.e164, '+14155552671')
  t.equal(dialledNumber(invite('sip:14155552671@gw;user=phone', '<sip:x@gw>'))?.e164, '+14155552671', 'a PBX drops the +')
  t.equal(dialledNumber(invite('sip:%2B442071838750@gw', '<sip:x@gw>'))?.e164, '+442071838750', 'escaped')
  t.equal(dialledNumber(invite('sip:gw.example.com', '<sip:+14155552671@gw>'))?.e164, '+14155552671', 'no user: To')
  t.equal(dialledNumber(invite('sip:reception@gw', '<sip:reception@gw>')), undefined, 'not a number')
  t.equal(dialledNumber(invite('sip:123@gw', '<sip:123@gw>')), undefined, 'an extension is no E.164 number')
})
